"""The GitHub workflows parse, and every make target they run exists."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import REPO, script

WORKFLOWS = REPO / ".github" / "workflows"
ZIZMOR = REPO / ".venv" / "bin" / "zizmor"


def make_targets() -> set[str]:
    makefile = (REPO / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w.-]*):", makefile, flags=re.MULTILINE))


def commands(name: str) -> list[str]:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    return [
        step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step
    ]


@pytest.mark.parametrize("name", ["ci.yml", "regenerate.yml", "pages.yml"])
def test_every_make_target_a_workflow_runs_exists(name):
    used = {target for run in commands(name) for target in re.findall(r"\bmake (\w[\w-]*)", run)}
    assert used, f"{name} runs no make target"
    assert used <= make_targets(), used - make_targets()


def test_ci_runs_the_test_suite():
    assert any("make test" in run for run in commands("ci.yml"))


def test_regenerate_runs_weekly_and_on_demand_and_opens_a_pull_request():
    workflow = yaml.safe_load((WORKFLOWS / "regenerate.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert "workflow_dispatch" in triggers
    cron = triggers["schedule"][0]["cron"].split()
    assert len(cron) == 5 and cron[2] == "*" and cron[4] != "*"  # once a week
    assert any("make regenerate" in run for run in commands("regenerate.yml"))
    propose = workflow["jobs"]["propose"]
    opener = next(s for s in propose["steps"] if "create-pull-request" in s.get("uses", ""))
    assert opener["with"]["body-path"] == "pr-body.md"
    assert propose["needs"] == "regenerate"
    assert "changed == 'true'" in propose["if"]


def test_a_step_that_pipes_a_command_fails_when_the_command_fails():
    # A step's default shell has no pipefail: `make regenerate | tee log` would take tee's status.
    for name in ("ci.yml", "regenerate.yml", "pages.yml"):
        workflow = yaml.safe_load((WORKFLOWS / name).read_text())
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                run = step.get("run", "")
                if re.search(r"[^|]\|[^|]", run):
                    assert step.get("shell") == "bash", (name, step.get("name"))
                    assert "set -o pipefail" in run, (name, step.get("name"))


def test_the_regeneration_pull_request_carries_the_snapshot_with_the_index():
    workflow = yaml.safe_load((WORKFLOWS / "regenerate.yml").read_text())
    steps = workflow["jobs"]["propose"]["steps"]
    opener = next(s for s in steps if "create-pull-request" in s.get("uses", ""))
    paths = opener["with"]["add-paths"].split()
    assert {"output/", "snapshots/"} <= set(paths)
    upload = next(
        s for s in workflow["jobs"]["regenerate"]["steps"] if "upload-artifact" in s.get("uses", "")
    )
    assert set(upload["with"]["path"].split()) == {"output/", "snapshots/", "pr-body.md"}


def test_pages_publishes_the_site_when_the_index_changes():
    workflow = yaml.safe_load((WORKFLOWS / "pages.yml").read_text())
    triggers = workflow[True]
    assert triggers["push"]["branches"] == ["main"]
    assert "output/index.json" in triggers["push"]["paths"]  # names a path, reads nothing
    assert any(run.strip() == "make site" for run in commands("pages.yml"))
    build = workflow["jobs"]["build"]["steps"]
    upload = next(s for s in build if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "site"  # what make site writes
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert any("deploy-pages" in s.get("uses", "") for s in deploy["steps"])
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["build"]["permissions"] == {"contents": "read"}  # no id-token
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}


# -- least privilege, pinned actions, time limits (issue 20, item 6) ------------------------------
NAMES = ("ci.yml", "regenerate.yml", "pages.yml")
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def workflow_of(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


@pytest.mark.parametrize("name", NAMES)
def test_every_action_is_pinned_by_commit_and_every_job_has_a_time_limit(name):
    for job_name, job in workflow_of(name)["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), (name, job_name)
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.match(step["uses"]), (name, step["uses"])
            if "actions/checkout@" in step.get("uses", ""):
                assert step["with"]["persist-credentials"] is False, (name, job_name)


def test_ci_reads_only_and_runs_on_pull_requests():
    workflow = workflow_of("ci.yml")
    assert workflow["permissions"] == {"contents": "read"}
    assert "pull_request" in workflow[True]


def test_the_job_that_parses_upstream_holds_no_write_token():
    workflow = workflow_of("regenerate.yml")
    assert workflow["permissions"] == {}
    regenerate = workflow["jobs"]["regenerate"]
    assert regenerate["permissions"] == {"contents": "read"}
    text = yaml.safe_dump(regenerate)
    assert "${{ secrets." not in text  # only the job's own read-only token
    # It proves the change before anything is proposed: check, tests and site on that tree.
    runs = " ".join(s.get("run", "") for s in regenerate["steps"])
    assert "make check" in runs and "make test" in runs and "make site" in runs
    assert "::stop-commands::" in runs
    # The job that may write runs nothing that installs packages or reads upstream.
    propose = workflow["jobs"]["propose"]
    assert not any(
        "make" in s.get("run", "") or "pip" in s.get("run", "") for s in propose["steps"]
    )


def test_the_fallback_token_makes_the_pull_request_say_ci_is_started_by_hand():
    steps = workflow_of("regenerate.yml")["jobs"]["propose"]["steps"]
    opener = next(s for s in steps if "create-pull-request" in s.get("uses", ""))
    assert opener["with"]["token"] == "${{ secrets.REGENERATE_TOKEN || github.token }}"
    said = next(s for s in steps if s.get("name", "").startswith("Say how"))
    assert "CI must be started by hand" in said["run"]


@pytest.mark.skipif(shutil.which("zizmor") is None and not ZIZMOR.exists(), reason="no zizmor")
def test_zizmor_finds_nothing_of_medium_severity_or_above():
    zizmor = str(ZIZMOR) if ZIZMOR.exists() else "zizmor"
    result = subprocess.run(
        [zizmor, "--offline", "--min-severity", "medium", "--format", "json", str(WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


PR_HOSTILE = [
    "  added evil/B200: ```\n@maintainers #1 [click](https://x.example) ",
    "\x1b[31mred\x1b[0m \u202eabc ::error::boom <img src=x onerror=alert(1)> &amp; ",
    "\n````\n````` five `` two\u2028# heading\u0085- item\r",
    "x" * 1000,
]


def test_the_pull_request_text_is_one_code_block_of_exactly_the_log():
    """Rendered as GitHub does (CommonMark): the log is one <pre><code> holding exactly its
    lines, escaped and cut, and nothing of it is a tag, link, heading or list item."""
    import html as html_module

    from markdown_it import MarkdownIt

    pr_body = script("pr_body")
    log = "changed (upstream abc): wrote output/index.json\n" + "".join(PR_HOSTILE) + "\n"
    text = pr_body.body(log)
    rendered = MarkdownIt("gfm-like").render(text.removeprefix(pr_body.HEADER))
    assert rendered.startswith('<pre><code class="language-text">')
    assert rendered.count("<pre>") == 1 and rendered.endswith("</code></pre>\n")
    inside = html_module.unescape(rendered.split(">", 2)[2].removesuffix("</code></pre>\n"))
    lines = inside.removesuffix("\n").split("\n")
    assert lines[0] == "changed (upstream abc): wrote output/index.json"
    assert lines[1] == "  added evil/B200: ```"  # the line break of the log is kept
    assert "\\u001b[31mred" in lines[2] and "\\u202eabc" in lines[2]
    assert "<img src=x onerror=alert(1)> &amp;" in lines[2]  # shown, not rendered
    assert lines[3] == "````"  # a fence of the log's own closes nothing
    assert lines[4].startswith("````` five")
    assert "\\u2028# heading\\u0085- item\\u000d" in lines[4]
    assert all(len(line) <= pr_body.MAX_LINE for line in lines)
    assert lines[4].endswith("…") and len(lines) == 5
    assert not any(c in inside for c in "\x1b\u202e\u2028\u0085\r")


def test_the_pull_request_text_is_written_by_the_markdown_writers_own_function(monkeypatch):
    """One code path for every Markdown writer: the block is documents/markdown.inert_block."""
    pr_body = script("pr_body")
    monkeypatch.setattr(pr_body, "inert_block", lambda text: f"<<{text}>>")
    assert pr_body.body("a\n").endswith("<<a>>")


def test_the_pull_request_text_stays_within_github_s_limit_with_the_workflow_s_note():
    """GitHub takes a pull request body of at most 65,536 characters, and create-pull-request
    cuts a longer one: 400 log lines of 300 characters made a body of 121,000, whose cut lost
    the block's closing fence and the paragraph the workflow appends after it (CI must be
    started by hand). The lines shown stop within the budget; the rest are counted."""
    from markdown_it import MarkdownIt

    pr_body = script("pr_body")
    workflow = (REPO / ".github/workflows/regenerate.yml").read_text("utf-8")
    note = re.search(r"printf '\\n%s\\n' \"(.*?)\" >> pr-body.md", workflow)
    assert note
    for log in ("y" * 400 + "\n") * 1000, ("`" * 299 + "\n") * 1000:
        text = pr_body.body(log) + f"\n{note.group(1)}\n"
        assert len(text) <= 65_536
        rendered = MarkdownIt("gfm-like").render(text.removeprefix(pr_body.HEADER))
        assert rendered.count("<pre>") == 1
        said = note.group(1).split(": ", 1)[1]
        assert rendered.endswith(f"<p><strong>CI must be started by hand</strong>: {said}</p>\n")
        assert "more line(s)" in rendered

"""The GitHub workflows parse, and every make target they run exists."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"


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
    steps = workflow["jobs"]["regenerate"]["steps"]
    opener = next(s for s in steps if "create-pull-request" in s.get("uses", ""))
    assert opener["with"]["body-path"] == "regenerate.log"
    assert "changed == 'true'" in opener["if"]


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
    steps = workflow["jobs"]["regenerate"]["steps"]
    opener = next(s for s in steps if "create-pull-request" in s.get("uses", ""))
    paths = opener["with"]["add-paths"].split()
    assert {"output/", "snapshots/"} <= set(paths)


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
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}

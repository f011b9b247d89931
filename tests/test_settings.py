"""Every default is written once, in energy_index/settings.py, and every command reads it there.

The options are checked by changing every value of the settings module before the command line
is imported (in a fresh interpreter): an option whose default is written anywhere else keeps its
old value and fails, whether or not that value happens to equal the setting today.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from energy_index import model, settings
from tests.conftest import REPO

# The option (its parameter name) → the setting that is its default; (command, name) first.
OPTION_SETTINGS = {
    ("regenerate", "source"): "LIVE",
    ("regenerate", "vendored"): "VENDORED_SNAPSHOT",
    ("report", "out"): "DEFAULT_REPORT_PAGE",
    ("site", "out"): "DEFAULT_SITE",
    ("refresh-carbon", "vendored"): "CARBON_SNAPSHOT",
    "source": "VENDORED_SNAPSHOT",
    "task": "DEFAULT_TASK",
    "tasks": "DEFAULT_TASK",
    "itl_deadline_ms": "DEFAULT_ITL_DEADLINE_MS",
    "itl_statistic": "DEFAULT_ITL_STATISTIC",
    "out": "DEFAULT_OUT",
    "index": "DEFAULT_OUT",
    "published": "DEFAULT_OUT",
    "cache": "DEFAULT_CACHE",
    "carbon": "CARBON_SNAPSHOT",
    "repository": "UPSTREAM_URL",
    "api_base": "GITHUB_API_BASE",
    "raw_base": "GITHUB_RAW_BASE",
    "retries": "HTTP_RETRIES",
    "timeout": "HTTP_TIMEOUT_SECONDS",
    "backoff": "HTTP_BACKOFF_SECONDS",
    "timeout_total": "HTTP_TIMEOUT_TOTAL_SECONDS",
    "max_bytes": "HTTP_MAX_BYTES",
    "lock_timeout": "LOCK_TIMEOUT_SECONDS",
    "max_utilization": "DEFAULT_MAX_UTILIZATION",
}

# In a fresh interpreter: change every setting, then import the command line and print what each
# option's default becomes once click has converted it.
PROBE = """
import json, sys
from pathlib import Path
import click
import energy_index.settings as s

changed = json.loads(sys.argv[1])
for name, value in changed.items():
    setattr(s, name, value)
from energy_index.cli import main

def plain(value):
    if isinstance(value, (tuple, list)):
        value = [plain(v) for v in value]
        return value[0] if len(value) == 1 else value
    return str(value) if isinstance(value, Path) else value

found = {}
for name, command in main.commands.items():
    context = click.Context(command)
    for param in command.params:
        if not isinstance(param, click.Option) or param.is_flag:
            continue
        default = param.get_default(context)
        if not isinstance(default, (str, int, float, Path, tuple, list)):
            continue  # None, or click's marker of no default
        try:
            default = param.type_cast_value(context, default)
        except click.BadParameter:  # a choice whose changed default is not among the choices
            pass
        found[f"{name} {param.name}"] = plain(default)
print(json.dumps(found))
"""


def changed_settings() -> dict[str, object]:
    """Every scalar setting, changed: text gains a suffix, a number grows."""
    changed: dict[str, object] = {}
    for name, value in vars(settings).items():
        if not name.isupper():
            continue
        if isinstance(value, str):
            changed[name] = f"{value}-changed"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            changed[name] = value * 2 + 1
    return changed


def option_defaults(changed: dict[str, object]) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(changed)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_option_default_is_read_from_the_settings_module():
    changed = changed_settings()
    defaults = option_defaults(changed)
    unmapped, wrong = [], []
    for key, value in sorted(defaults.items()):
        command, name = key.split()
        setting = OPTION_SETTINGS.get((command, name), OPTION_SETTINGS.get(name))
        if setting is None:
            unmapped.append(key)
        elif value != changed[setting]:
            wrong.append(f"{key}: {value!r}, expected {setting} = {changed[setting]!r}")
    assert unmapped == [], "each option with a default needs its setting in OPTION_SETTINGS"
    assert wrong == []
    # Every command that has a deadline, a snapshot or network limits was seen.
    assert {"build itl_deadline_ms", "regenerate itl_deadline_ms", "report source"} <= set(defaults)
    assert sum(key.endswith(" retries") for key in defaults) == 9  # refresh-carbon, plan, names too


def test_the_settings_have_the_documented_defaults():
    # The values the docs and the committed output state; a change here is a change of them.
    assert settings.DEFAULT_ITL_DEADLINE_MS == 500.0
    assert settings.DEFAULT_TASK == "lm-arena-chat"
    assert (settings.MIN_BATCH_UTILIZATION, settings.MIN_STEADY_STATE_SECONDS) == (0.85, 20.0)


# Literals that are defaults: each may stand in settings.py only (the schemas, editorial text and
# tests say them too, as data; help text shows them from settings.py).
DEFAULT_LITERALS = {
    settings.DEFAULT_TASK,
    settings.UPSTREAM_REPOSITORY,
    settings.UPSTREAM_URL,
    settings.GITHUB_API_BASE,
    settings.GITHUB_RAW_BASE,
    settings.VENDORED_SNAPSHOT,
    settings.CARBON_SNAPSHOT,
    settings.CARBON_PATH,
    settings.DEFAULT_OUT,
    settings.DEFAULT_REPORT_PAGE,
    settings.DEFAULT_CACHE,
    settings.CHANGELOG_NAME,
    settings.DEADLINES_NAME,
    settings.CURVES_NAME,
    model.INDEX_PATH,
    model.SNAPSHOT_MANIFEST,
}
DEFAULT_NUMBERS = {
    settings.DEFAULT_ITL_DEADLINE_MS,
    settings.HTTP_MAX_BYTES,
    settings.LOCK_TIMEOUT_SECONDS,
    settings.HTTP_TIMEOUT_TOTAL_SECONDS,
    settings.MIN_BATCH_UTILIZATION,
}


def _constants(path: Path) -> list[tuple[int, object]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            found.append((node.lineno, node.value))
    return found


def test_every_default_is_written_once():
    repeated = []
    for path in sorted((REPO / "pipeline" / "energy_index").rglob("*.py")):
        if path.name in ("settings.py", "model.py"):
            continue
        for line, value in _constants(path):
            # Numbers of the same type only: 500 the HTTP status is not 500.0 the deadline.
            numbers = {n for n in DEFAULT_NUMBERS if type(n) is type(value)}
            if value in DEFAULT_LITERALS or value in numbers:
                repeated.append(f"{path.relative_to(REPO)}:{line}: {value!r}")
    assert repeated == []

"""The deployment files, checked by parsing: Docker and Fly.io cannot run here.

`fly.toml` against the Dockerfile and the app's own settings loader: the volume is mounted where
the image's environment puts the data folder, every health check asks a route the app serves,
one Machine that is never stopped, 512 MB, a kill timeout above the shutdown grace. The
Dockerfile runs `memory-bot run` as a non-root user; the systemd unit runs the same command with
the same grace and a read-only system.
"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from bot.health import ROUTES
from bot.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[2]
GRACE = Settings.model_fields["shutdown_grace_seconds"].default
MARGIN_S = 10  # closing the stores after the grace (WAL checkpoint, index handles)


def dockerfile() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` per instruction: comments dropped, continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in (REPO / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def docker_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in dockerfile():
        if word == "ENV":
            for token in shlex.split(rest):
                key, sep, value = token.partition("=")
                assert sep, f"ENV {token!r}: use the KEY=value form"
                env[key] = value
    return env


def fly() -> dict:
    return tomllib.loads((REPO / "fly.toml").read_text())


def mount_destination(config: dict) -> str:
    mounts = config["mounts"]
    mounts = mounts if isinstance(mounts, list) else [mounts]
    assert len(mounts) == 1, "one volume"
    return mounts[0]["destination"]


def image_settings() -> Settings:
    """The settings `memory-bot run` builds inside the image on Fly.io: the Dockerfile's ENV,
    then fly.toml's [env] (secrets aside, they hold no path or port)."""
    return load_settings({**docker_env(), **fly().get("env", {})}, env_file=None)


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string((REPO / "deploy" / "memory-bot.service").read_text())
    return parser


def test_the_volume_is_mounted_at_the_data_folder_the_image_uses():
    settings = image_settings()
    destination = mount_destination(fly())
    assert settings.data_dir == Path(destination).resolve()
    # the image's non-root user owns that folder
    runs = " ".join(rest for word, rest in dockerfile() if word == "RUN")
    assert re.search(rf"chown\s+\S+\s+{re.escape(destination)}(\s|$)", runs)


def test_every_health_check_asks_a_route_the_app_serves_on_the_health_port():
    config, settings = fly(), image_settings()
    assert settings.health_port == 8080
    assert docker_env()["HEALTH_PORT"] == "8080"
    service = config["http_service"]
    assert service["internal_port"] == settings.health_port
    checks = [(c["path"], settings.health_port) for c in service.get("checks", [])]
    checks += [(c["path"], c["port"]) for c in config.get("checks", {}).values()]
    healthcheck = [rest for word, rest in dockerfile() if word == "HEALTHCHECK"]
    assert len(healthcheck) == 1
    checks += [(path, settings.health_port)
               for path in re.findall(r"https?://[^/'\"]+(/[\w/-]*)", healthcheck[0])]
    assert "/healthz" in [path for path, _ in checks]
    for path, port in checks:
        assert path in ROUTES, f"{path} is not served by bot/health.py"
        assert port == settings.health_port


def test_one_machine_that_is_never_stopped():
    config = fly()
    service = config["http_service"]
    assert service["auto_stop_machines"] == "off"
    assert service["auto_start_machines"] is False
    assert service["min_machines_running"] == 1
    # no strategy that boots a second Machine (a second poller) next to the first
    assert config["deploy"]["strategy"] in ("rolling", "immediate")
    assert config["deploy"].get("max_unavailable", 1) == 1
    assert "services" not in config  # the health endpoint is the only service
    assert [vm["memory"] for vm in config["vm"]] == ["512mb"]
    assert config["kill_signal"] == "SIGTERM"
    assert GRACE + MARGIN_S <= config["kill_timeout"] <= 300


def test_the_image_runs_memory_bot_run_as_a_non_root_user():
    steps = dockerfile()
    words = [word for word, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    assert words.count("CMD") == 1 and words[-1] == "CMD"
    assert json.loads(steps[-1][1]) == ["memory-bot", "run"]
    users = [rest for word, rest in steps if word == "USER"]
    assert users, "no USER: the container would run as root"
    assert users[-1].split(":")[0] not in ("root", "0")
    assert words.index("USER") < words.index("CMD")
    assert not any(word == "ENTRYPOINT" for word in words)
    assert ("EXPOSE", "8080") in steps
    assert ("STOPSIGNAL", "SIGTERM") in steps
    assert any(word == "RUN" and rest.startswith("pip install .") for word, rest in steps)


def test_the_build_context_leaves_out_local_state():
    ignored = {line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "data", ".env", "eval-*.json"} <= ignored
    copied = {src for word, rest in dockerfile() if word == "COPY" for src in rest.split()[:-1]}
    assert {"pyproject.toml", "README.md", "memory", "adapters", "bot"} <= copied
    assert copied.isdisjoint(ignored)


def test_the_systemd_unit_runs_memory_bot_run_with_the_grace_and_a_read_only_system():
    service = unit()["Service"]
    program, *args = service["ExecStart"].split()
    assert (Path(program).name, args) == ("memory-bot", ["run"])
    assert Path(program).is_absolute()
    assert service["KillSignal"] == "SIGTERM"
    assert float(service["TimeoutStopSec"]) >= GRACE + MARGIN_S
    assert service["Restart"] == "on-failure"
    assert service["RestartPreventExitStatus"] == "2"
    assert service["User"] not in ("root", "0")
    assert service["EnvironmentFile"].lstrip("-").endswith("/.env")
    assert service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict"
    env = dict(token.split("=", 1) for token in shlex.split(service["Environment"]))
    settings = load_settings(env, env_file=None)
    assert service["ReadWritePaths"].split() == [str(settings.data_dir)]
    assert Path("/var/lib", service["StateDirectory"]) == settings.data_dir
    assert unit()["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.parametrize("doc", ["docs/deploy.md", "docs/troubleshooting.md"])
def test_the_deploy_docs_are_linked_from_the_readme(doc):
    assert (REPO / doc).is_file()
    assert f"]({doc})" in (REPO / "README.md").read_text()

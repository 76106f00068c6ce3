"""The installed `braze` package (pip install .) carries what it runs with: the libraries, the
shipped scheduler plugins with manifests that match them, and the plugin scanner, all found
relative to the package. Each check imports braze in a child process run from / with a clean
environment, so that neither the source tree nor the caller's plugin settings are seen."""

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIPPED_PLUGINS = ("pointwise", "reduction", "inner_outer", "scan")

_DESCRIBE = """
import json, braze
found = braze.schedulers() if hasattr(braze, "schedulers") else None
print(json.dumps({"file": braze.__file__, "version": braze.__version__, "schedulers": found}))
"""


def _clean_environment(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAZE_") and k != "PYTHONPATH"}
    # The probe cache and the user's plugin folder live under these.
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("package")
    result = subprocess.run([sys.executable, "-c", _DESCRIBE], cwd="/", capture_output=True,
                            text=True, env=_clean_environment(tmp_path))
    if "No module named 'braze'" in result.stderr:
        pytest.skip(f"braze is not installed for {sys.executable}: `pip install {REPO}` "
                    "(tools/run-tests.sh does it in the build folder's venv)")
    assert result.returncode == 0, f"import braze failed:\n{result.stderr}"
    description = json.loads(result.stdout.splitlines()[-1])
    description["package"] = Path(description["file"]).parent
    return description


def test_imported_from_an_installed_package_not_the_source_tree(installed):
    assert installed["package"] != REPO / "python" / "braze"
    assert installed["package"].parent.name == "site-packages", installed["package"]


def test_version_is_the_projects(installed):
    project = re.search(r"project\(Braze VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text())
    assert installed["version"] == project.group(1)


@pytest.mark.parametrize("name", SHIPPED_PLUGINS)
def test_plugin_and_its_manifest_are_installed_and_match(installed, name):
    folder = installed["package"] / "lib" / "braze" / "plugins"
    library = folder / f"libbraze_{name}.so"
    manifest_file = folder / f"libbraze_{name}.braze-plugin.json"
    assert library.is_file(), f"missing {library}"
    assert manifest_file.is_file(), f"missing {manifest_file}"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["library"] == library.name
    # The registry refuses a plugin whose bytes differ from its manifest's sha256.
    assert manifest["sha256"] == hashlib.sha256(library.read_bytes()).hexdigest()


def test_scanner_loads_every_shipped_plugin(installed, tmp_path):
    scanner = installed["package"] / "libexec" / "braze-plugin-scanner"
    assert os.access(scanner, os.X_OK), f"missing or not executable: {scanner}"
    for name in SHIPPED_PLUGINS:
        library = installed["package"] / "lib" / "braze" / "plugins" / f"libbraze_{name}.so"
        result = subprocess.run([str(scanner), str(library)], cwd="/", capture_output=True,
                                text=True, env=_clean_environment(tmp_path))
        assert result.returncode == 0, f"{scanner} {library}:\n{result.stderr}"


def test_registry_finds_the_shipped_schedulers(installed):
    if installed["schedulers"] is None:
        pytest.skip("this braze has no braze.schedulers()")
    status = {s["id"]: (s["status"], s["reason"], s["path"]) for s in installed["schedulers"]}
    for name in SHIPPED_PLUGINS:
        assert status.get(f"braze::{name}", ("missing",))[0] == "available", status
        assert Path(status[f"braze::{name}"][2]).is_relative_to(installed["package"])


def test_no_cuda_library_is_carried(installed):
    # libcuda is opened at run time and NVRTC comes from the CUDA toolkit on the machine.
    carried = [p.name for p in installed["package"].rglob("*") if re.match(r"lib(cuda|nvrtc)", p.name)]
    assert carried == []

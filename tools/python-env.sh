# Sourced by tools/run-tests.sh and tools/run-demo.sh (not run on its own).
#
# braze_python_env ROOT BUILD [PACKAGE...]: installs the `braze` Python package, built from ROOT
# by `pip install` as on a user's machine, into the virtual environment BUILD/python-venv, with
# any extra PACKAGEs from PyPI (pytest, numpy), and sets BRAZE_PYTHON to its interpreter.
#
# Built in BUILD/python-package with the main build's type (BRAZE_BUILD_TYPE), so the compile
# lines of the core, serde and the plugins equal the main build's and ccache serves them: only
# the extension and the links are new work. The build requirements are installed into the
# environment once and the build runs without pip's isolation, so pybind11 keeps one path and
# a second run rebuilds only what changed.
braze_python_env() {
  local root=$1 build=$2
  shift 2
  local venv=$build/python-venv
  local host_python=${BRAZE_HOST_PYTHON:-python3}

  if [[ ! -x $venv/bin/python ]]; then
    if ! "$host_python" -m venv "$venv"; then
      rm -rf "$venv"
      echo "braze: could not create a virtual environment with $host_python; on Debian," \
           "install python3-venv (tools/install-deps.sh does)" >&2
      return 1
    fi
  fi
  BRAZE_PYTHON=$venv/bin/python

  # The build requirements, read from pyproject.toml (its one list).
  local requires
  requires=$("$BRAZE_PYTHON" - "$root/pyproject.toml" <<'PY'
import ast, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
try:
    import tomllib
    requires = tomllib.loads(text)["build-system"]["requires"]
except ImportError:  # Python < 3.11
    requires = ast.literal_eval(re.search(r"^requires\s*=\s*(\[.*?\])", text, re.M | re.S).group(1))
print("\n".join(requires))
PY
  ) || return 1
  local -a packages
  mapfile -t packages <<<"$requires"
  if ! "$BRAZE_PYTHON" -m pip install --quiet --disable-pip-version-check --retries 2 \
    "${packages[@]}" "$@"; then
    braze_python_from_tree "$root" "$build" "$@"
    return
  fi

  # The main build's compiler: scikit-build-core otherwise takes the one Python was built with
  # (g++ rather than c++), which changes every compile line.
  local cxx=${CXX:-}
  if [[ -z $cxx && -f $build/CMakeCache.txt ]]; then
    cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  fi
  # ccache keys objects built with -g by their build folder unless told not to; tools/build.sh
  # sets the same, so both folders share them.
  env CCACHE_NOHASHDIR=1 ${cxx:+CXX="$cxx"} "$BRAZE_PYTHON" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation \
    --config-settings=build-dir="$build/python-package" \
    --config-settings=cmake.build-type="${BRAZE_BUILD_TYPE:-RelWithDebInfo}" \
    --config-settings=cmake.define.BRAZE_DEBUG_INFO="${BRAZE_DEBUG_INFO:-ON}" \
    "$root" || {
    echo "braze: building the Python package failed (pip install $root); its build folder is" \
         "$build/python-package" >&2
    return 1
  }
}

# Where pip cannot reach a package index (no network, or a TLS proxy whose certificate the
# machine lacks), the package cannot be pip installed: build the extension with the tree
# instead (BRAZE_BUILD_PYTHON, Debian's pybind11 and Python headers) and use Debian's Python
# with Debian's numpy and pytest, so the Python tests still run. Sets BRAZE_PYTHON and
# PYTHONPATH (<build>/python, where python/CMakeLists.txt assembles the package).
braze_python_from_tree() {
  local root=$1 build=$2
  echo "braze: pip could not install from a package index (see above); building the braze" \
       "package with the tree and testing it from $build/python instead" >&2
  local -a wanted=(python3 python3-dev pybind11-dev)
  local package
  for package in "${@:3}"; do wanted+=("python3-$package"); done
  local -a missing=()
  for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  if ((${#missing[@]} > 0)); then
    local -a sudo_cmd=()
    [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null || return 1
  fi
  cmake -S "$root" -B "$build" -DBRAZE_BUILD_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3 \
    >/dev/null || return 1
  cmake --build "$build" --target _braze || return 1
  BRAZE_PYTHON=/usr/bin/python3
  export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
}

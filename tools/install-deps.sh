#!/usr/bin/env bash
# Installs what building and testing Braze needs, when it is missing. Safe to run again:
# nothing is installed twice. Debian packages come from apt-get (as root, or through sudo).
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libflatbuffers-dev flatbuffers-compiler libdlpack-dev pybind11-dev
  nlohmann-json3-dev
  python3 python3-venv python3-dev
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "braze: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "braze: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -d /usr/local/cuda && -z "${CUDA_HOME:-}" ]]; then
  echo "braze: note: no CUDA toolkit at /usr/local/cuda; GPU code generation needs one (NVRTC)." >&2
fi

# nvdisasm, for the tests that read the machine code (SASS) of Hopper kernels
# (tests/cpp/support/sass_listing.cpp): the CUDA toolkit here ships without it, PyPI has it.
# Installed into its own folder, where the tests look; they skip with a note without it.
tools_dir=${BRAZE_TOOLS_DIR:-/opt/braze-tools}
if [[ ! -x $tools_dir/nvidia/cu13/bin/nvdisasm && ! -x /usr/local/cuda/bin/nvdisasm ]] &&
   ! command -v nvdisasm >/dev/null; then
  echo "braze: installing nvdisasm into $tools_dir"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --target "$tools_dir" nvidia-cuda-nvdisasm==13.4.92 ||
    echo "braze: note: could not install nvdisasm; the SASS checks will skip" >&2
fi

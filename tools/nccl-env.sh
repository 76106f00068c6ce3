# Sourced by the GPU scripts: where a machine has no libnccl.so.2 on the loader's path but
# PyTorch's nvidia-nccl wheel is installed, points Braze at the wheel's site-packages
# (BRAZE_PYTHON_SITE_PACKAGES, which braze/driver/nccl_library.h searches). Leaves a value the
# caller set alone.
braze_nccl_env() {
  [[ -n ${BRAZE_PYTHON_SITE_PACKAGES:-} || -n ${BRAZE_NCCL_LIBRARY:-} ]] && return 0
  command -v python3 >/dev/null || return 0
  local packages
  packages=$(python3 -c 'import os, nvidia.nccl as n; print(os.path.dirname(os.path.dirname(list(n.__path__)[0])))' 2>/dev/null) || return 0
  [[ -n $packages ]] && export BRAZE_PYTHON_SITE_PACKAGES=$packages
  return 0
}

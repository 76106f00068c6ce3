#!/usr/bin/env bash
# The SDK as a vendor uses it: install Braze into a temporary prefix, build the out-of-tree
# example plugin from the copy installed with the SDK's guide
# (<prefix>/share/braze/sdk/examples/flat_elementwise) against that prefix only, then check that
# Braze's registry loads it and chooses it by name, first from its build folder, then installed
# beside Braze's own plugins (where installing rewrote its RPATH and its manifest).
#
# usage: install_and_build_example.sh BRAZE_BUILD_DIR BRAZE_SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
export XDG_DATA_HOME=$work/data XDG_CACHE_HOME=$work/cache  # no user plugins, fresh probe cache

step() { echo "== $*"; }

step "install Braze into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

step "the SDK's guide and its example are installed"
guide=$prefix/share/braze/sdk
test -f "$guide/README.md" || { echo "no SDK guide at $guide/README.md"; exit 1; }
diff -r "$source/sdk/examples/flat_elementwise" "$guide/examples/flat_elementwise" ||
  { echo "the installed example differs from sdk/examples/flat_elementwise"; exit 1; }

step "build the installed example against the installed package"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$guide/examples/flat_elementwise" -B "$work/example" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "${launcher[@]}" >"$work/configure.log"
grep -q "Braze_DIR:PATH=$prefix/" "$work/example/CMakeCache.txt" ||
  { echo "the example did not find Braze in $prefix"; grep Braze_DIR "$work/example/CMakeCache.txt"; exit 1; }
cmake --build "$work/example"
test -f "$work/example/libacme_flat_elementwise.braze-plugin.json"

step "load it from its build folder and choose it by name"
"$work/example/check_flat_elementwise" "$work/example"

step "install it beside Braze's plugins and load it from there"
cmake --install "$work/example" --prefix "$prefix" >"$work/install-example.log"
"$work/example/check_flat_elementwise" "$prefix/lib/braze/plugins"

step "the installed braze finds its own plugins and scanner, not the build tree's"
list=$("$prefix/bin/braze" plugins list)
echo "$list"
grep -q "braze::pointwise@1.0.0  rank 100  available  $prefix/lib/braze/plugins/" <<<"$list"
grep -q "acme::flat_elementwise@1.0.0  rank 500  available  $prefix/lib/braze/plugins/" <<<"$list"
if grep -q "$build/plugins" <<<"$list"; then echo "the installed braze searched the build tree"; exit 1; fi
"$prefix/bin/braze" plugins inspect "$prefix/lib/braze/plugins/libacme_flat_elementwise.so"
echo "sdk example: all checks passed"

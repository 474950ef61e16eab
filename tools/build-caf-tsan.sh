#!/usr/bin/env bash
# Builds CAF 0.17.6 (Debian's actor-framework source) with ThreadSanitizer and installs it into a
# prefix, for `cmake -DAM_SANITIZE=thread -DCAF_ROOT=<prefix>` (see doc/testing.md).
#
#   tools/build-caf-tsan.sh [PREFIX]
#
# PREFIX: first argument, else $CAF_TSAN_PREFIX, else /opt/caf-tsan.
# Work dir for the source and the build: $CAF_TSAN_SRC, else /opt/caf-tsan-src.
# Parallel jobs: $CAF_TSAN_JOBS, else 2.
# Needs root (or sudo) for apt. Idempotent: exits at once when PREFIX already holds a built CAF.
set -euo pipefail

PREFIX="${1:-${CAF_TSAN_PREFIX:-/opt/caf-tsan}}"
WORK="${CAF_TSAN_SRC:-/opt/caf-tsan-src}"
JOBS="${CAF_TSAN_JOBS:-2}"
CAF_VERSION=0.17.6
SRC_LIST=/etc/apt/sources.list.d/actormesh-deb-src.sources

log() { printf '[build-caf-tsan] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
as_root() {
  if [[ ${EUID} -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root for: $*"; fi
}
have_lib() { compgen -G "${PREFIX}/lib*/lib$1.so" >/dev/null; }

# ---- 0. already built? ---------------------------------------------------------------------------
if have_lib caf_core && have_lib caf_io && [[ -f ${PREFIX}/include/caf/config.hpp ]]; then
  log "${PREFIX} already holds a CAF build; nothing to do"
  echo "-DCAF_ROOT=${PREFIX}"
  exit 0
fi

# ---- 1. a deb-src entry for Debian's main archive (mirrors the existing deb entry) -------------------
# Prints "URI|SUITES|COMPONENTS|SIGNED_BY" for the main archive (URI ending in /debian) from the
# deb822 *.sources files or the one-line *.list files.
main_archive_entry() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && uris ~ /\/debian\/?$/ && !found) {
          print uris "|" suites "|" comps "|" signed; found = 1
        }
        types = uris = suites = comps = signed = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      {
        key = $1; sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
        if (key == "Types") types = val
        else if (key == "URIs") uris = val
        else if (key == "Suites") suites = val
        else if (key == "Components") comps = val
        else if (key == "Signed-By") signed = val
      }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    # deb [options] URI suite components...
    awk '$1 == "deb" {
           i = 2; signed = ""
           if ($2 ~ /^\[/) {
             while (i <= NF) { if ($i ~ /^signed-by=/) { signed = $i; sub(/^signed-by=/, "", signed); sub(/\]$/, "", signed) }
                               if ($i ~ /\]$/) { i++; break } ; i++ }
           }
           if ($i !~ /\/debian\/?$/) next
           comps = ""; for (j = i + 2; j <= NF; j++) comps = comps (comps ? " " : "") $j
           print $i "|" $(i + 1) "|" comps "|" signed
         }' "$f"
  done
}

have_deb_src() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    if grep -Eq '^[[:space:]]*deb-src[[:space:]]' "$f" ||
       grep -Eq '^[[:space:]]*Types:.*deb-src' "$f"; then
      return 0
    fi
  done
  return 1
}

if have_deb_src; then
  log "a deb-src entry already exists"
else
  entry="$(main_archive_entry | head -n1)"
  [[ -n $entry ]] || die "no deb entry for Debian's main archive found under /etc/apt"
  IFS='|' read -r uri suites comps signed <<<"$entry"
  log "adding deb-src for ${uri} (${suites}; ${comps}) in ${SRC_LIST}"
  {
    echo "# Added by actormesh tools/build-caf-tsan.sh: source packages for the TSan build of CAF."
    echo "Types: deb-src"
    echo "URIs: ${uri}"
    echo "Suites: ${suites}"
    echo "Components: ${comps}"
    [[ -z $signed ]] || echo "Signed-By: ${signed}"
  } | as_root tee "${SRC_LIST}" >/dev/null
fi

# ---- 2. tools and the source --------------------------------------------------------------------
need_pkgs=()
command -v cmake >/dev/null || need_pkgs+=(cmake)
command -v g++ >/dev/null || need_pkgs+=(g++)
command -v dpkg-source >/dev/null || need_pkgs+=(dpkg-dev)
dpkg-query -W -f='${Status}' libssl-dev 2>/dev/null | grep -q 'ok installed' || need_pkgs+=(libssl-dev)

log "apt-get update"
as_root apt-get update -qq
if ((${#need_pkgs[@]})); then
  log "installing ${need_pkgs[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}"
fi

as_root mkdir -p "${WORK}"
orig="${WORK}/actor-framework_${CAF_VERSION}.orig.tar.gz"
if [[ ! -f ${orig} ]]; then
  log "apt-get source --download-only actor-framework into ${WORK}"
  # The Debian patch tarball may fail to download; only the original tarball is needed.
  (cd "${WORK}" && apt-get source --download-only actor-framework) ||
    log "apt-get source reported an error; continuing if the original tarball arrived"
fi
[[ -f ${orig} ]] || orig="$(compgen -G "${WORK}/actor-framework_${CAF_VERSION}.orig.tar.*" | head -n1 || true)"
[[ -n ${orig} && -f ${orig} ]] || die "actor-framework_${CAF_VERSION}.orig.tar.* not found in ${WORK}"

src="${WORK}/actor-framework-${CAF_VERSION}"
build="${WORK}/build"
if [[ ! -f ${src}/CMakeLists.txt ]]; then
  log "unpacking $(basename "${orig}")"
  rm -rf "${src}"
  mkdir -p "${src}"
  tar -xf "${orig}" -C "${src}" --strip-components=1
fi

# ---- 3. configure, build, install ---------------------------------------------------------------
# The libraries keep Debian's SONAMEs (libcaf_core.so.0.17.6, ...); RUNPATH $ORIGIN makes libcaf_io and
# libcaf_openssl load their siblings from PREFIX rather than Debian's uninstrumented copies.
configure() { # $1: ON to leave out the OpenSSL module
  cmake -S "${src}" -B "${build}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INSTALL_PREFIX="${PREFIX}" \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread -include limits" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
    -DCMAKE_INSTALL_RPATH="\$ORIGIN" \
    -DCAF_NO_EXAMPLES=ON -DCAF_NO_UNIT_TESTS=ON -DCAF_NO_OPENCL=ON \
    -DCAF_NO_PYTHON=ON -DCAF_NO_TOOLS=ON -DCAF_NO_OPENSSL="$1"
}

start=${SECONDS}
openssl=yes
if ! { configure OFF && cmake --build "${build}" -j "${JOBS}"; }; then
  log "build with the OpenSSL module failed; retrying with CAF_NO_OPENSSL=ON"
  openssl=no
  configure ON
  cmake --build "${build}" -j "${JOBS}"
fi
as_root cmake --install "${build}"
log "built and installed in $((SECONDS - start)) s"

if ! { have_lib caf_core && have_lib caf_io; }; then
  die "install did not produce libcaf_core.so and libcaf_io.so"
fi
if [[ ${openssl} == no ]]; then
  log "warning: no libcaf_openssl in ${PREFIX}; FindCAF would take Debian's uninstrumented one"
fi
log "installed: $(compgen -G "${PREFIX}/lib*/libcaf_*.so" | tr '\n' ' ')"
echo "-DCAF_ROOT=${PREFIX}"

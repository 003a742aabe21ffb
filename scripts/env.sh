# Sourced by scripts/serve and scripts/test: the Python environment the project runs in, made on first use.
#
# A virtual environment that is already active (VIRTUAL_ENV) is used as it is. Otherwise the commands use
# .venv in the repository (git-ignored), made with the first Python >= 3.11 found, so that nothing is
# installed into the system's Python (Debian 12 refuses that: PEP 668, "externally managed").
# `crisp_env EXTRA` leaves the environment's python in $PY and its bin folder first on PATH, with the
# project installed (editable) with EXTRA ("" or "test"); it installs again only when pyproject.toml changed.

crisp_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

crisp_fail() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# The first interpreter on PATH that is Python 3.11 or newer.
crisp_base_python() {
  local candidate
  for candidate in "${CRISP_PYTHON:-}" python3.13 python3.12 python3.11 python3 python; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

crisp_make_venv() {
  local venv=$1 base errors
  base=$(crisp_base_python) || crisp_fail "Python 3.11 or newer is needed (none found on PATH; set CRISP_PYTHON to one)"
  echo "== making the virtual environment $venv (with $base)"
  errors=$(mktemp)
  if "$base" -m venv "$venv" >/dev/null 2>"$errors"; then
    rm -f "$errors"
    return 0
  fi
  # Debian and Ubuntu split venv's copy of pip into python3-venv. A system pip can still install into a
  # venv made without one (pip --python, pip >= 22.3).
  rm -rf "$venv"
  if "$base" -m venv --without-pip "$venv" >/dev/null 2>&1 \
    && "$base" -m pip --python "$venv/bin/python" install --quiet --disable-pip-version-check pip >/dev/null 2>&1; then
    rm -f "$errors"
    return 0
  fi
  rm -rf "$venv"
  cat "$errors" >&2
  rm -f "$errors"
  crisp_fail "could not make a virtual environment with $base. On Debian or Ubuntu: apt-get install python3-venv"
}

crisp_env() {
  local extra=$1 env_dir spec stamp want
  if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    env_dir=$VIRTUAL_ENV
  else
    env_dir="$crisp_root/.venv"
    [ -x "$env_dir/bin/python" ] || crisp_make_venv "$env_dir"
  fi
  PY="$env_dir/bin/python"
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || crisp_fail "$env_dir has $("$PY" --version 2>&1); Crisp needs Python 3.11 or newer"
  export VIRTUAL_ENV=$env_dir
  export PATH="$env_dir/bin:$PATH"
  spec="."
  [ -z "$extra" ] || spec=".[$extra]"
  # Installed again when pyproject.toml, the extra or the checkout's place changes.
  want="$spec $crisp_root $(cksum <"$crisp_root/pyproject.toml")"
  stamp="$env_dir/.crisp-installed${extra:+-$extra}"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "== installing crisp-server${extra:+ with its $extra extra} into $env_dir"
    (cd "$crisp_root" && PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install --quiet --disable-pip-version-check -e "$spec") \
      || crisp_fail "pip could not install $spec (see above)"
    printf '%s' "$want" >"$stamp"
  fi
}

# Whether this machine can compile the engine and rooms: a C compiler and the environment's Python headers.
crisp_can_compile() {
  command -v "${CC:-cc}" >/dev/null 2>&1 || { echo "no C compiler (${CC:-cc}; Debian: apt-get install gcc)"; return 1; }
  "$PY" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || { echo "no Python.h for $("$PY" --version) (Debian: apt-get install python3-dev)"; return 1; }
}

# Compile the engine and rooms with mypyc (scripts/build_native.py), unless they are built from the current
# sources already. Needs an extra with mypy and setuptools installed (native or test).
crisp_compile() {
  local log
  if CRISP_NATIVE=auto "$PY" -m crisp_server.native status >/dev/null 2>&1; then
    echo "== the engine and rooms are compiled from the current sources"
    return 0
  fi
  echo "== compiling the engine and rooms with mypyc (a few minutes; about ten on a busy two-core machine)"
  log=$(mktemp)
  if ! CRISP_NATIVE=auto "$PY" "$crisp_root/scripts/build_native.py" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    crisp_fail "the mypyc build failed (above)"
  fi
  tail -n 1 "$log"
  rm -f "$log"
}

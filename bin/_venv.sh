# Sourced by the bin/ scripts: make sure the project's virtualenv exists and holds what
# the caller needs, creating or completing it on first use so the README's commands work
# on a fresh machine. The caller sets EXTRAS first: "" (the shell alone: no PySpark, no
# test tools), "spark" (bin/kafka-metadata-fleet) or "dev,spark" (bin/test). Sets VENV.
#
# The stamp file records the pyproject.toml it was installed from and the extras
# installed: a venv made by the shell's first run is completed with the extras bin/test
# needs, not rebuilt; a changed pyproject.toml installs again (into the same venv).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${METASHELL_VENV:-$root/.venv}"
stamp="$VENV/.metashell-installed"
project="$(cksum < "$root/pyproject.toml")"

_metashell_have() {   # the stamp's extras, if it was made from this pyproject.toml
  [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] || return 1
  local line
  line="$(head -n 1 "$stamp")"
  case "$line" in
    *"|"*) ;;
    *) line="$line|dev,spark" ;;   # a stamp of before the split: everything was installed
  esac
  [ "${line%%|*}" = "$project" ] || return 1
  printf '%s\n' "${line#*|}"
}

_metashell_covers() {   # whether the extras in $1 include every one in $2
  local want
  for want in ${2//,/ }; do
    case ",$1," in *",$want,"*) ;; *) return 1 ;; esac
  done
}

_metashell_install() {
  local have all fresh
  if ! have="$(_metashell_have)"; then have=""; fresh=1; else fresh=0; fi
  if [ "$fresh" = 0 ] && _metashell_covers "$have" "$EXTRAS"; then
    return 0
  fi
  all="$(printf '%s\n' ${have//,/ } ${EXTRAS//,/ } | sort -u | paste -sd, -)"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "metashell: [1/3] creating the virtualenv $VENV (first run)" >&2
    "${PYTHON:-python3}" -m venv "$VENV" >&2
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  fi
  echo "metashell: [2/3] installing metashell${all:+ [$all]} and its dependencies into $VENV" >&2
  "$VENV/bin/python" -m pip install --progress-bar on --disable-pip-version-check \
    -e "$root${all:+[$all]}" >&2
  echo "$project|$all" > "$stamp"
  echo "metashell: [3/3] ready" >&2
}

EXTRAS="${EXTRAS:-}"
_metashell_install

# Sourced by the bin/ scripts: make sure the project's virtualenv exists and is
# installed (editable, with the dev and spark extras), creating it on first use so the
# README's commands work on a fresh machine. Sets VENV.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${METASHELL_VENV:-$root/.venv}"
stamp="$VENV/.metashell-installed"
want="$(cksum < "$root/pyproject.toml")"
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "metashell: setting up $VENV (first run)..." >&2
  "${PYTHON:-python3}" -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet -e "$root[dev,spark]" >&2
  echo "$want" > "$stamp"
fi

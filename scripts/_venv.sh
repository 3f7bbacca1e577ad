# Sourced by scripts/serve, scripts/test and scripts/docs (which set $extra): make .venv with
# mockagent installed.
# Reinstalls only when pyproject.toml changed, so a second run starts at once.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
extra="${extra:-}"  # set by the caller: "", "test" or "docs"
py="${PYTHON:-python3}"
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "mockagent needs Python 3.11 or newer ($py is $("$py" --version 2>&1))" >&2; exit 1; }
venv="$root/.venv"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
stamp="$venv/.installed${extra:+-$extra}"
if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
  # This project was installed as `mockagent` before it became `mockagent-server`: an old .venv
  # keeps that one's entry points beside the new one's unless it goes first.
  if "$venv/bin/python" -m pip show mockagent >/dev/null 2>&1; then
    "$venv/bin/python" -m pip uninstall --quiet --yes mockagent
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root${extra:+[$extra]}"
  touch "$stamp"
fi

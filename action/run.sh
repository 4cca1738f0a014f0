#!/usr/bin/env bash
# The one step of the semfix GitHub Action (action.yml): install semfix, then review the changed
# lines, as GitHub annotations or as rdjson handed to reviewdog. It is a script, not inline YAML,
# so that tests/test_action.py can run this very file in a temporary repository.
#
# Environment (action.yml sets it from the inputs):
#   SEMFIX_VERSION             empty: install this action's checkout; `latest`; or a PyPI version
#   SEMFIX_PATHS               paths to review, separated by spaces (default: .)
#   SEMFIX_BASE                --base for semfix review (default: semfix's own choice)
#   SEMFIX_ARGS                more arguments for semfix review, separated by spaces
#   SEMFIX_WORKING_DIRECTORY   the checkout to review (actions/checkout's `path:`; default: .)
#   SEMFIX_REVIEWDOG_REPORTER  empty: --format github; else the reviewdog reporter for rdjson
#   SEMFIX_INSTALL=skip        use the semfix already on PATH (the tests; no network)
# Exit status: semfix review's (0 clean, 1 findings, 2 an error such as a shallow checkout),
# or reviewdog's when semfix found nothing and reviewdog failed.
set -uo pipefail

if [[ ${SEMFIX_INSTALL:-} != skip ]]; then
  action_path=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
  case ${SEMFIX_VERSION:-} in
    "") spec=$action_path ;;
    latest) spec=semfix ;;
    *) spec="semfix==$SEMFIX_VERSION" ;;
  esac
  venv="${RUNNER_TEMP:-$(mktemp -d)}/semfix-venv"
  if ! python3 -m venv "$venv" || ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"; then
    echo "error: could not install semfix ($spec)" >&2
    exit 2
  fi
  PATH="$venv/bin:$PATH"
fi

if ! cd "${SEMFIX_WORKING_DIRECTORY:-.}"; then
  echo "error: working-directory ${SEMFIX_WORKING_DIRECTORY}: no such folder" >&2
  exit 2
fi

# On a push, the trunk's merge base with HEAD is HEAD itself: review what the push brought, from
# the commit before it (the event's `before`), unless a base was given. A new branch has none.
if [[ -z ${SEMFIX_BASE:-} && ${GITHUB_EVENT_NAME:-} == push && -r ${GITHUB_EVENT_PATH:-} ]]; then
  before=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("before") or "")' \
    "$GITHUB_EVENT_PATH" 2>/dev/null)
  if [[ -n $before && $before != *[!0]* ]]; then
    echo "::warning::semfix: a new branch was pushed: no commit before it to compare with; set the base input"
  elif [[ -n $before ]]; then
    SEMFIX_BASE=$before
  fi
fi

read -ra paths <<< "${SEMFIX_PATHS:-.}"
read -ra args <<< "${SEMFIX_ARGS:-}"
if [[ -n ${SEMFIX_BASE:-} ]]; then
  args=(--base "$SEMFIX_BASE" ${args[@]+"${args[@]}"})
fi
(( ${#paths[@]} )) || paths=(.)

if [[ -z ${SEMFIX_REVIEWDOG_REPORTER:-} ]]; then
  semfix review --format github ${args[@]+"${args[@]}"} -- "${paths[@]}"
  exit $?
fi

# semfix already keeps only the changed lines; nofilter lets reviewdog post a file-level error too.
report=$(mktemp)
trap 'rm -f "$report"' EXIT
semfix review --format rdjson ${args[@]+"${args[@]}"} -- "${paths[@]}" > "$report"
status=$?
reviewdog -f=rdjson -name=semfix -reporter="$SEMFIX_REVIEWDOG_REPORTER" -filter-mode=nofilter -fail-level=none \
  < "$report"
posted=$?
if (( status == 0 && posted != 0 )); then
  exit "$posted"
fi
exit "$status"

#!/bin/sh
# The tests' own robot family, the tinybot (tests/family/tinybot/), proves
# what docs/adding-a-family.md says: a family is its own folders and one
# line in the top CMakeLists.txt's list of families. Nothing else in the
# tree names it (but this check and that page), and the list names it once;
# every test that covers all families covers it in a build that lists it
# (-DFLOCKBRIDGE_TEST_FAMILY=ON: the test command's sanitizer build). Prints
# what names it elsewhere, and fails.
set -eu
cd "$(dirname "$0")/../.."
family=tinybot
[ -d "tests/family/$family" ] || { echo "no tests/family/$family"; exit 2; }
files="$(git ls-files -co --exclude-standard)" || { echo "not a git checkout: the check lists the tree's files with git"; exit 2; }
elsewhere="$(echo "$files" | grep -v "^tests/family/$family/" |
  grep -vx -e docs/adding-a-family.md -e tests/structure/family_is_its_folder.sh -e CMakeLists.txt |
  xargs -d '\n' grep -Iliws "$family" || true)"
status=0
if [ -n "$elsewhere" ]; then
  echo "the tests' own family is named outside its folder and the list of families:"
  echo "$elsewhere" | while read -r file; do grep -niw "$family" "$file" | sed "s|^|  $file:|"; done
  status=1
fi
lines="$(grep -ciw "$family" CMakeLists.txt || true)"
if [ "$lines" -ne 1 ]; then
  echo "the top CMakeLists.txt names the tests' own family on $lines lines, not once (the list):"
  grep -niw "$family" CMakeLists.txt || true
  status=1
fi
exit $status

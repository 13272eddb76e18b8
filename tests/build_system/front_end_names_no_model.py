#!/usr/bin/env python3
"""The host front end names no model (issue 42): the C++ code of host/study, host/cli,
host/output and host/mpi, comments and string literals aside, names no built-in model's
ModelKind enumerator and none of the model-specific names that the models' descriptions
(host/models) hold since the models declare their own keys: a chain's atoms, bond length and
Lennard-Jones epsilon, the penalty pendulum's constraint function and steps per oscillation,
the chain sizes of the build. Messages and docs strings may name models (they describe them).

Usage: front_end_names_no_model.py <chens source dir>; exit 1 naming each file:line."""
import os
import re
import sys

FRONT_END = ("host/study", "host/cli", "host/output", "host/mpi")
NAMES = re.compile(r"\bModelKind::(pendulum|chain|penalty_pendulum|double_pendulum)\b"
                   r"|\b(atoms|bond_length|lj_epsilon|penalty_constraint|steps_per_oscillation"
                   r"|float_chain_atoms|compiled_chain_sizes|chain_sizes\.hpp)\b")
# ParameterId's enumerators (ParameterId::bond_length, ...) are the engines' parameter list
# (host/backends/parameter_laws.hpp), not a model named by the front end.
PARAMETER_ID = re.compile(r"\bParameterId::\w+")
LITERAL_OR_COMMENT = re.compile(
    r'R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"'  # raw strings
    r'|"(?:\\.|[^"\\\n])*"'                    # strings
    r"|'(?:\\.|[^'\\\n])*'"                    # characters
    r"|//[^\n]*"                               # line comments
    r"|/\*.*?\*/",                             # block comments
    re.S)


def code_only(text):
    """The text with literals and comments blanked, line breaks kept (for line numbers)."""
    return LITERAL_OR_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def main(src):
    found = []
    scanned = 0
    for part in FRONT_END:
        for root, _, files in os.walk(os.path.join(src, part)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".in")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    code = PARAMETER_ID.sub(" ", code_only(f.read()))
                scanned += 1
                for number, line in enumerate(code.split("\n"), 1):
                    m = NAMES.search(line)
                    if m:
                        found.append("%s:%d: %s" % (os.path.relpath(path, src), number, m.group(0)))
    if scanned == 0:
        print("FAIL: no source found under %s" % ", ".join(FRONT_END))
        return 1
    if found:
        print("FAIL: the front end names a model:\n  " + "\n  ".join(found))
        return 1
    print("ok: %d files of %s name no model" % (scanned, ", ".join(FRONT_END)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""What the gallery's exporter scripts (build_torch.py, build_tf.py) share: exporting a table of cases."""

import os
import sys

from ortkit_export import ExportError


def export_cases(cases, out, wanted=(), failing=None):
    """Exports each case of `cases` (name -> function of the case's folder) into OUT/<name>/, or only those
    named in `wanted` when it is not empty. `failing` maps the cases whose export must fail to the code it
    must fail with (export.json then records the error for doctor). Any other outcome is reported on stderr
    and the next case still runs (one broken exporter should not hide the others). Returns the exit code:
    1 if any case did not do what it should."""
    failing = failing or {}
    failed = 0
    for name, export in cases.items():
        if wanted and name not in wanted:
            continue
        try:
            export(os.path.join(out, name))
            if name in failing:
                print(f"{name}: exported, but the export should fail with {failing[name]}", file=sys.stderr)
                failed += 1
            else:
                print(f"exported {name}")
        except ExportError as e:
            if failing.get(name) == e.code:
                print(f"{name}: failed as it should: {e.render()}")
            else:
                print(f"{name}: {e.render()}", file=sys.stderr)
                failed += 1
    return 1 if failed else 0

"""What the gallery's exporter scripts (build_torch.py, build_tf.py) share: exporting a table of cases."""

import os
import sys

from ortkit_export import ExportError


def export_cases(cases, out, wanted=()):
    """Exports each case of `cases` (name -> function of the case's folder) into OUT/<name>/, or only those
    named in `wanted` when it is not empty. A failed export is reported on stderr and the next case still
    runs (one broken exporter should not hide the others). Returns the exit code: 1 if any failed."""
    failed = 0
    for name, export in cases.items():
        if wanted and name not in wanted:
            continue
        try:
            export(os.path.join(out, name))
            print(f"exported {name}")
        except ExportError as e:
            print(f"{name}: {e.render()}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0

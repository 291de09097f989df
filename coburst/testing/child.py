"""The process :func:`coburst.testing.run_policy` runs one simulation in:
``python -m coburst.testing.child TASK_JSON`` (a policy class given as ``module:qualname``
is registered first, then the run is ``coburst run``'s)."""

from __future__ import annotations

import importlib
import json
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    task = json.loads(argv[0])
    from coburst.errors import CoburstError

    try:
        if task.get("class"):
            from coburst import registry

            module, _, qualname = task["class"].partition(":")
            obj = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            registry.register(obj)
        from coburst.runner import run

        run(task["scheduler"], platform=task["platform"], workloads=[task["workload"]], export=task["export"],
            options=task["options"], sim_args=task["sim_args"], transport=task["transport"],
            timeout=float(task["timeout"]))
    except CoburstError as exc:
        print(f"coburst run: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())

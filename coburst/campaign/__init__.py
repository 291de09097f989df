"""Experiment campaigns: a grid of schedulers x options x platforms x workloads x seeds
(x engines), declared in a TOML file and run resumably, on the local cores or on a Dask
cluster.

* :mod:`coburst.campaign.spec`     the TOML format, its validation and the grid expansion
* :mod:`coburst.campaign.naming`   readable run ids derived from the parameters
* :mod:`coburst.campaign.runner`   one run: the directory contract, atomic publication
* :mod:`coburst.campaign.child`    the process one run executes in (``coburst run`` or the real Batsim)
* :mod:`coburst.campaign.executors` local thread pool or Dask distributed, progress, resume
* :mod:`coburst.campaign.launch`   checks, output folder, the runs to do and how they ended (``coburst campaign``, :func:`coburst.api.campaign`)

Directory contract (shared with :mod:`coburst.analysis`)::

    <out>/campaign.toml            copy of the spec (a different spec is refused)
    <out>/campaign.json            what else identifies the campaign (engines, spec place)
    <out>/runs/<run-id>/params.json  flat object: scheduler, options (JSON string), platform
                                     and workload (absolute paths), seed, engine, the workload's
                                     labels, platform_name, workload_name, scheduler_spec, sim_args
    <out>/runs/<run-id>/status.json  {"state": "done"|"failed", "error": ..., "wall_s": ...}
    <out>/runs/<run-id>/out_jobs.csv, out_schedule.csv, ...   (output prefix <run-dir>/out)
"""

from coburst.campaign.spec import Campaign, Run, load_campaign  # noqa: F401

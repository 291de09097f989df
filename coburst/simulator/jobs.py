"""A job inside the simulator: its workload description plus its execution state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from procset import ProcSet

from coburst.simulator.workload import Job


@dataclass
class SimJob:
    """A job in the simulator: its description plus its execution state."""

    job: Job
    state: str = "NOT_SUBMITTED"
    alloc: ProcSet | None = None
    start: float = -1.0
    finish: float = -1.0
    return_code: int = -1
    run: Any = None  # the job's execution.JobRun while it runs
    kill_requested: bool = False
    deleted: bool = False
    storage_mapping: dict[str, int] | None = None
    mapping: dict[int, int] | None = None
    energy: Any = None  # -E: the allocation's energy at the start, then the job's consumed energy
    #: TO_JOB_MSG messages not yet taken by a recv profile (Batsim's incoming_message_buffer;
    #: a deque once the first one comes)
    messages: Any = None
    #: an elastic job resized at least once: the allocation it started on (its _jobs.csv row)
    first_alloc: ProcSet | None = None

    _alloc_text: str | None = None

    @property
    def alloc_text(self) -> str:
        """The allocation as Batsim prints it (``0-3 8``)."""
        if self._alloc_text is None:
            self._alloc_text = str(self.alloc)
        return self._alloc_text

    _ids: list | None = None
    _ids_of: Any = None

    def machine_ids(self) -> list[int]:
        """The allocation's ids as a sorted list (worked out once: a ProcSet is slow to iterate)."""
        ids = self._ids
        if ids is None or self._ids_of is not self.alloc:
            ids = self._ids = [i for lo, hi in self.alloc.intervals() for i in range(lo, hi + 1)]  # list(alloc)
            self._ids_of = self.alloc
        return ids

    @property
    def id(self) -> str:
        return self.job.id

    @property
    def walltime(self) -> float:
        return self.job.walltime


class CompactIds:
    """A set of job ids kept in 8 bytes each once there are many: the ids of finished jobs
    Batsim still knows (``Jobs::exists``, ``_jobs_met``) without a Python string per job.
    The latest ids (up to ``_FLUSH``) are kept as they are, in a set; then they become
    64-bit BLAKE2b digests in sorted numpy runs, merged as they double (a run of fewer jobs
    hashes nothing and imports neither hashlib nor numpy for it).  Two ids of one digest
    would make the second look present (odds about n²/2^65: 3e-6 for ten million ids)."""

    _FLUSH = 1 << 16

    def __init__(self):
        self._recent: set = set()  # the items themselves, until _FLUSH of them
        self._runs: list = []
        self._n = 0

    @staticmethod
    def _key(jid: str) -> int:
        import hashlib

        return int.from_bytes(hashlib.blake2b(jid.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                              "little", signed=True)

    def add(self, jid) -> None:
        if jid in self:
            return
        self._recent.add(jid)
        self._n += 1
        if len(self._recent) >= self._FLUSH:
            import numpy as np

            key = self._key
            run = np.sort(np.fromiter((key(item) for item in self._recent), dtype=np.int64, count=len(self._recent)))
            self._recent = set()
            while self._runs and len(self._runs[-1]) <= 2 * len(run):
                run = np.sort(np.concatenate((self._runs.pop(), run)), kind="stable")
            self._runs.append(run)

    def __contains__(self, item) -> bool:
        if item in self._recent:
            return True
        if self._runs:
            import numpy as np

            key = self._key(item)
            for run in self._runs:
                i = int(np.searchsorted(run, key))
                if i < len(run) and int(run[i]) == key:
                    return True
        return False

    def __len__(self) -> int:
        return self._n


class ProfileKeys(CompactIds):
    """A set of (workload, profile name) pairs in 8 bytes each (:class:`CompactIds` of
    ``workload!name``: a workload name holds no ``!``): the profiles Batsim garbage-collected
    or that were added during the simulation, without two Python strings per profile."""

    @staticmethod
    def _key(pair) -> int:
        wname, name = pair
        return CompactIds._key(f"{wname}!{name}")


class ProfileTable(dict):
    """The profiles of a dynamic workload (REGISTER_PROFILE), by name, that let go of the
    profiles Batsim 4.2.1 discarded (``Jobs::delete_job`` -> ``Profiles::remove_profile``)
    once no live job uses them: Batsim's map keeps the name with a null pointer (the name
    still "exists": registering it again aborts; getting it fails), and a live job keeps its
    own pointer.  Here a dropped name stays *in* the table (``name in table`` is True, its
    digest in :class:`CompactIds`) but its :class:`Profile` is gone; ``users`` counts the live
    jobs whose profile it is.  A profile a composed profile lists, or a composed one, is
    never dropped (sequences are looked up by name when they run)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.users: dict[str, int] = {}
        self.dropped = CompactIds()
        self.in_seq: set[str] = set()

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or (isinstance(name, str) and name in self.dropped)

    def __setitem__(self, name, profile) -> None:
        if profile.type == "composed":
            self.in_seq.update(profile.data["seq"])
        dict.__setitem__(self, name, profile)

    def use(self, name: str) -> None:
        """A live job whose profile is ``name`` (registered)."""
        self.users[name] = self.users.get(name, 0) + 1

    def release(self, name: str, collected: bool) -> None:
        """A job whose profile is ``name`` was deleted; ``collected``: Batsim discarded the
        profile.  The last live user of a discarded profile drops it."""
        n = self.users.get(name, 0) - 1
        if n > 0:
            self.users[name] = n
            return
        self.users.pop(name, None)
        if collected and name not in self.in_seq:
            prof = dict.get(self, name)
            if prof is not None and prof.type != "composed":
                dict.__delitem__(self, name)
                self.dropped.add(name)

"""A snapshot's kept runs, applied when that part of the image is read.

The reader leaves a snapshot's runs of configs, client quotas, ACLs, SCRAM
users and delegation tokens unread (:mod:`metashell.fast.kept_runs`);
:class:`~metashell.fast.replay_entries.EntryReplay` keeps them in ``Image.kept_runs``,
counted as applied. :class:`KeptReplay` applies them, in order, when that
part of the image is first read (:meth:`KeptReplay.settle`), checks that
they would apply without applying them where only the counts are asked
(:meth:`KeptReplay.check`), and answers ``summary``'s one config question
from their bytes (:meth:`KeptReplay.config_values`).
"""

from __future__ import annotations

from ..fast.door import KEPT_COUNT, REF, StoreRefs
from ..gcpause import no_cyclic_gc
from ..kraft.catalog import METADATA
from ..kraft.records import UNDECODABLE
from .delta import Delta
from .entities.configs import config_key, set_config
from .problems import Tally


class KeptReplay:
    """Applies, checks and reads the kept runs of a load's images (each
    image asks it with itself: it holds none)."""

    def __init__(self, refs: StoreRefs, tally: Tally):
        self.refs = refs
        self.store = refs.store
        self.tally = tally

    def settle(self, image, api: int | None) -> None:
        """Read and apply the runs of records of apiKey ``api`` (None: all) a
        snapshot's batches left unread, in order: that part of the image is
        being looked at, or changed by what follows. They were counted as
        applied when kept (see :meth:`check`): one that fails is taken
        back."""
        kept = image.kept_runs
        delta = Delta(image, self.tally)
        with no_cyclic_gc():
            for a in list(kept) if api is None else [api]:
                name = METADATA[a].name
                for run in kept.pop(a):
                    ref, n = run[REF], run[KEPT_COUNT]
                    if a == 4 and delta.on_change is None:
                        self._apply_configs(delta, ref, n)
                        continue
                    for one in self.store.run_refs(ref, n):
                        self._apply_kept(delta, one, name)

    def config_values(self, image, name: str) -> dict:
        """``{(type name, resource name): value}`` of config ``name`` as
        ``Image.configs`` holds it, without applying the ConfigRecords a
        snapshot kept unread where their bytes say it (``summary``: every
        topic's ``min.insync.replicas``; 0.50x -> 0.39x the walk on a snapshot
        with three overrides per topic); they are applied where they do not."""
        runs = image.kept_runs.get(4)
        found = [] if runs is None else [self.store.config_values(run[REF], run[KEPT_COUNT], name.encode())
                                         for run in runs]
        if None in found:
            found = []
        configs = image.configs_so_far() if found else image.configs()   # none kept, or applied now
        out = {key: ent.value for key, keys in configs.items() if (ent := keys.get(name)) is not None}
        for values in found:
            for (rtype, rname), value in values.items():
                key = config_key(rtype, rname)
                if value is None:
                    out.pop(key, None)
                else:
                    out[key] = value
        if found:
            image.kept_checked.add(4)   # they decode: counted as they are
        return out

    def check(self, image) -> None:
        """Make sure every record kept unread applies (they were counted
        when kept) by decoding it, nothing applied (`summary` on a snapshot
        with two ACLs per topic: 0.66x -> 0.59x the walk, and no entity
        made); a kind with one that would not is applied now, so that it is
        reported and taken back."""
        data, run_refs = self.store.data, self.store.run_refs
        for api in [a for a in image.kept_runs if a not in image.kept_checked]:
            for run in image.kept_runs[api]:
                ref, n = run[REF], run[KEPT_COUNT]
                if api == 18 and self.store.acls_decode(ref, n):   # ACLs: 4 -> 1 us each
                    continue
                got = [data(one, api) for one in run_refs(ref, n)]
                if None in got or (api == 11 and any("credentialInfos" in g[0] for g in got)):
                    self.settle(image, api)   # the pre-3.5 SCRAM layout is not replayed either
                    break
            else:
                image.kept_checked.add(api)

    def _apply_configs(self, delta, ref: int, n: int) -> None:
        """A run of ConfigRecords read straight from its bytes, each ref its
        history (no Record: 3.7 -> 1.8 us per record), as the ConfigRecord
        rule applies one; one laid out otherwise as the general path reads it."""
        base, h, append_ts, found = self.store.config_fields(ref, n)
        stamp = self.refs.stamp(ref)
        ts = h.base_timestamp if append_ts is None else append_ts
        for f in found:
            if len(f) == 1:
                self._apply_kept(delta, base + f[0], "ConfigRecord")
                continue
            change = (stamp[0], stamp[1] or ts) if stamp else (h.base_offset + f[1], ts)
            set_config(delta, f[2], f[3], f[4], f[5], change, base + f[0])

    def _apply_kept(self, delta, ref: int, name: str) -> None:
        """A kept record applied as the general path applies one (counted
        once already: taken back, counted again if it applies)."""
        rec = self.refs.record(ref)
        if rec.kind == UNDECODABLE:
            self.tally.undecodable(rec)
        else:
            delta.replay(rec)
        self.tally.count(name, -1)

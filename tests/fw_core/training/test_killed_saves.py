"""Saves killed with SIGKILL at random instants: the destination always loads as the old or the
new checkpoint, and the next save leaves no temporary file behind.

Each round forks a saver from a server process that has imported fw once (multiprocessing's
forkserver), so a round costs a save, not an interpreter start. ``FW_KILL_ROUNDS`` and
``FW_KILL_MIB`` set the number of kills per kind of save and the checkpoint's size (the suite
runs 12 rounds of 8 MiB; ``FW_KILL_ROUNDS=40 FW_KILL_MIB=64`` is the full check).
"""

import contextlib
import multiprocessing
import os
import random
import signal
import time

import numpy as np
import pytest

import fw_core as fw

ROUNDS = int(os.environ.get("FW_KILL_ROUNDS", "12"))
MIB = int(os.environ.get("FW_KILL_MIB", "8"))
WIDTH = 1024
LAYERS = max(1, MIB * 2**20 // (4 * WIDTH * WIDTH))


def state(tag: int) -> dict:
    """A ``MIB``-MiB state dict whose every value tells which ``tag`` wrote it."""
    count = MIB * 2**20 // 4
    return {"tag": fw.tensor(tag), "values": fw.from_numpy(np.full(count, tag, np.float32))}


def model(tag: int) -> fw.Model:
    net = fw.nn.Sequential(*[fw.nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)])
    with fw.no_grad():
        for p in net.parameters():
            p.fill_(float(tag))
    m = fw.Model(net)
    m.compile(optimizer="sgd", loss="mse")
    return m


def save_file(path: str, tag: int) -> None:
    fw.save(state(tag), path)


def save_model(path: str, tag: int) -> None:
    model(tag).save(path)


def tag_of_file(path) -> int:
    loaded = fw.load(path)
    tag = int(loaded["tag"].item())
    assert np.all(loaded["values"].numpy() == tag)
    return tag


def tag_of_model(path) -> int:
    params = list(fw.Model.load(path).module.parameters())
    tag = int(params[0].detach().numpy().flat[0])
    assert all(np.all(p.detach().numpy() == tag) for p in params)
    return tag


KINDS = {"fw.save": (save_file, tag_of_file, "c.safetensors"),
         "model.save": (save_model, tag_of_model, "m")}


@pytest.fixture(scope="module")
def forkserver():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fw_core", __name__])
    return context


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_killed_saves_leave_the_old_or_the_new_checkpoint(kind, forkserver, tmp_path):
    save, tag_of, name = KINDS[kind]
    path = str(tmp_path / name)
    save(path, 0)

    def run(tag: int, kill_after: float | None) -> float:
        start = time.perf_counter()
        child = forkserver.Process(target=save, args=(path, tag))
        child.start()
        if kill_after is not None:
            time.sleep(kill_after)
            with contextlib.suppress(ProcessLookupError):  # it had finished
                os.kill(child.pid, signal.SIGKILL)
        child.join()
        return time.perf_counter() - start

    run(1, None)  # the server's first fork: warm it up
    duration = max(run(1, None) for _ in range(2))
    rng = random.Random(1)
    current, outcomes = 1, {"old": 0, "new": 0}
    for round_ in range(ROUNDS):
        new = current + 1
        run(new, rng.uniform(0.0, 1.1 * duration))
        found = tag_of(path)
        assert found in (current, new), f"round {round_}: loaded {found}"
        outcomes["old" if found == current else "new"] += 1
        save(path, new + 1)  # the next save: it removes what the killed one left
        current = new + 1
        assert sorted(os.listdir(tmp_path)) == [name] and fw.io.stale(path) == []
        if kind == "model.save":  # the pointer and the one version it names
            assert len(os.listdir(path)) == 2
        assert tag_of(path) == current
    print(f"{kind}: {ROUNDS} kills of a {MIB} MiB save ({duration * 1e3:.0f} ms): "
          f"{outcomes['old']} old, {outcomes['new']} new")
    assert outcomes["old"] > 0  # the kills did land inside the saves

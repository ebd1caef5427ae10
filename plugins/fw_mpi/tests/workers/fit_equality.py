"""``Model.fit(distributed=True)`` on N ranks against a one-process fit on the same global
batches. Each rank prints one JSON line; rank 0 adds the differences to its reference.

``fit_equality.py FOLDER`` trains from fresh weights (different on each rank); ``fit_equality.py
FOLDER RESUME`` loads the model a job of any size saved in RESUME and trains one more epoch."""

import json
import sys

import numpy as np

import fw_core as fw
import fw_mpi
from fw_core.training.callbacks import ModelCheckpoint

EPOCHS, BATCH = 2, 8


class CountingCheckpoint(ModelCheckpoint):
    calls = 0

    def on_epoch_end(self, epoch, logs=None):
        CountingCheckpoint.calls += 1
        super().on_epoch_end(epoch, logs)


def build():
    model = fw.Sequential([fw.nn.Linear(6, 16), fw.nn.ReLU(), fw.nn.Linear(16, 3)])
    return model.compile(optimizer=fw.optim.SGD(model.module.parameters(), lr=0.1,
                                                momentum=0.9),
                         loss="cross_entropy", metrics=["accuracy"])


def start_model(resume: str | None, seed: int):
    if resume is not None:
        return fw.Model.load(resume)
    fw.manual_seed(seed)
    return build()


def main(folder: str, resume: str | None) -> None:
    fw_mpi.init(timeout=60)
    rank, size = fw_mpi.rank(), fw_mpi.size()
    rng = np.random.default_rng(1)
    n = BATCH * size * 4
    x = rng.standard_normal((n, 6)).astype(np.float32)
    y = rng.integers(0, 3, n).astype(np.int64)
    model = start_model(resume, rank)
    first, epochs = model.epoch, model.epoch + (1 if resume else EPOCHS)
    start = {k: v.detach().numpy().copy() for k, v in model.module.state_dict().items()}
    start = fw_mpi.all_gather(fw.tensor(np.concatenate([v.ravel() for v in start.values()])))
    history = model.fit(x, y, epochs=epochs, initial_epoch=first, batch_size=BATCH,
                        shuffle=False, verbose=0, distributed=True,
                        callbacks=[CountingCheckpoint(folder)])
    mine = np.concatenate([p.detach().numpy().ravel() for p in model.module.parameters()])
    compiled = model._compiled[1].explain().splitlines()[0]  # the step's call counters
    result = {"rank": rank, "checkpoints": CountingCheckpoint.calls, "compiled": compiled,
              "loss": history.history["loss"], "accuracy": history.history["accuracy"]}
    if rank == 0:
        # one process, batches of BATCH * size holding exactly the ranks' batches
        order = np.arange(n).reshape(-1, size).T.reshape(size, -1, BATCH).transpose(1, 0, 2)
        reference = start_model(resume, 0)
        ref_history = reference.fit(x[order.ravel()], y[order.ravel()], epochs=epochs,
                                    initial_epoch=first, batch_size=BATCH * size,
                                    shuffle=False, verbose=0, compiled=False)
        theirs = np.concatenate([p.detach().numpy().ravel()
                                 for p in reference.module.parameters()])
        saved = fw.Model.load(folder)
        result.update(
            weight_diff=float(np.abs(mine - theirs).max()),
            loss_diff=float(np.abs(np.subtract(history.history["loss"],
                                               ref_history.history["loss"])).max()),
            accuracy_diff=float(np.abs(np.subtract(history.history["accuracy"],
                                                   ref_history.history["accuracy"])).max()),
            checkpoint_diff=float(np.abs(np.concatenate(
                [p.detach().numpy().ravel() for p in saved.module.parameters()]) - mine).max()),
            started_apart=float(np.abs(start[0].numpy() - start[1].numpy()).max()))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)

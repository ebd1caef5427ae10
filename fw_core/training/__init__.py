"""The Keras-style high level: Model, callbacks, metrics."""

from . import callbacks, metrics
from .callbacks import (
    Callback,
    CSVLogger,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    ModelCheckpoint,
    TerminateOnNaN,
)
from .model import Model, Sequential
from .progress import ProgressBar

__all__ = ["CSVLogger", "Callback", "EarlyStopping", "History", "LambdaCallback",
           "LearningRateScheduler", "Model", "ModelCheckpoint", "ProgressBar", "Sequential",
           "TerminateOnNaN", "callbacks", "metrics"]

"""The layers, one file per family; ``fw.nn`` re-exports them all."""

from .activation import *  # noqa: F403
from .activation import __all__ as _activations
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, Sequential
from .conv import *  # noqa: F403
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .conv import __all__ as _convs
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instance_norm import *  # noqa: F403
from .instance_norm import __all__ as _instance_norms
from .linear import Bilinear, Identity, Linear
from .lora import LoRA
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from .padding import *  # noqa: F403
from .padding import __all__ as _paddings
from .parameter_containers import ParameterDict, ParameterList
from .pixel_shuffle import PixelShuffle, PixelUnshuffle
from .pooling import *  # noqa: F403
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .pooling import __all__ as _pools
from .rnn import GRU, LSTM, RNN
from .rnn_cell import GRUCell, LSTMCell, RNNCell
from .sparse import Embedding, EmbeddingBag
from .transformer import TransformerEncoder, TransformerEncoderLayer
from .transformer_decoder import Transformer, TransformerDecoder, TransformerDecoderLayer
from .upsampling import *  # noqa: F403
from .upsampling import __all__ as _upsamplings

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear",
           "Conv1d", "Conv2d", "ConvTranspose2d", "Dropout", "Embedding", "Flatten", "GRU",
           "GroupNorm", "Identity", "LSTM", "LayerNorm", "Linear", "MaxPool2d", "ModuleDict",
           "ModuleList", "LoRA", "MultiheadAttention", "RMSNorm", "RNN", "Sequential",
           "AlphaDropout", "CosineSimilarity", "Dropout1d", "Dropout2d", "Dropout3d",
           "EmbeddingBag", "FeatureAlphaDropout", "GRUCell", "LSTMCell", "PairwiseDistance",
           "ParameterDict", "ParameterList", "RNNCell",
           "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer", "Unflatten", *_activations,
           "Fold", "Unfold",
           *_convs, *_pools, *_upsamplings,
           *_instance_norms, *_paddings, "PixelShuffle", "PixelUnshuffle",
           # losses
           "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss"]

"""Type stub of ``fairtalk``: the names ``__init__.py`` loads lazily, as a type checker should see them."""

__version__: str

from fairtalk.corpora import Corpus as Corpus
from fairtalk.corpora import ReadSummary as ReadSummary
from fairtalk.corpora import read_corpus as read_corpus
from fairtalk.counterfactual import Swapper as Swapper
from fairtalk.counterfactual import SwapResult as SwapResult
from fairtalk.debias.candidate_filter import PoolFilterResult as PoolFilterResult
from fairtalk.debias.candidate_filter import filter_pool as filter_pool
from fairtalk.debias.candidate_filter import read_pool as read_pool
from fairtalk.debias.candidate_filter import write_pool as write_pool
from fairtalk.debias.cda import Augmentation as Augmentation
from fairtalk.debias.cda import AugmentedDialogue as AugmentedDialogue
from fairtalk.debias.cda import AugmentSummary as AugmentSummary
from fairtalk.debias.cda import augment as augment
from fairtalk.debias.cda import write_dialogues as write_dialogues
from fairtalk.debias.wer import EmbeddingRegularizer as EmbeddingRegularizer
from fairtalk.errors import BadResponse as BadResponse
from fairtalk.errors import CorpusError as CorpusError
from fairtalk.errors import FairtalkError as FairtalkError
from fairtalk.errors import InputError as InputError
from fairtalk.errors import LexiconError as LexiconError
from fairtalk.errors import OutputError as OutputError
from fairtalk.errors import RateLimited as RateLimited
from fairtalk.errors import ResponderAborted as ResponderAborted
from fairtalk.errors import ResponderError as ResponderError
from fairtalk.errors import ResponderTimeout as ResponderTimeout
from fairtalk.errors import SpecError as SpecError
from fairtalk.errors import StoreError as StoreError
from fairtalk.errors import TransportError as TransportError
from fairtalk.jsonl import jsonable as jsonable
from fairtalk.lexicons import AttributeList as AttributeList
from fairtalk.lexicons import Lexicon as Lexicon
from fairtalk.lexicons import WordPair as WordPair
from fairtalk.lexicons import axis_groups as axis_groups
from fairtalk.lexicons import axis_names as axis_names
from fairtalk.lexicons import builtin_axes as builtin_axes
from fairtalk.lexicons import expand_axis as expand_axis
from fairtalk.lexicons import load_attributes as load_attributes
from fairtalk.lexicons import load_lexicon as load_lexicon
from fairtalk.lexicons.identity import identity_terms as identity_terms
from fairtalk.measures import CorpusMeasure as CorpusMeasure
from fairtalk.measures import Measure as Measure
from fairtalk.measures import default_measures as default_measures
from fairtalk.measures import get_measure as get_measure
from fairtalk.measures import measure_names as measure_names
from fairtalk.measures import score_unique as score_unique
from fairtalk.measures.regard import Regard as Regard
from fairtalk.measures.regard_train import train_regard as train_regard
from fairtalk.models import BaseResponder as BaseResponder
from fairtalk.models import DecodingSettings as DecodingSettings
from fairtalk.models import RayEngine as RayEngine
from fairtalk.models import Responder as Responder
from fairtalk.models import completion_options as completion_options
from fairtalk.models import load_responder as load_responder
from fairtalk.models import model_prefixes as model_prefixes
from fairtalk.models import parse_model_args as parse_model_args
from fairtalk.pairs import Coverage as Coverage
from fairtalk.pairs import PairsCheck as PairsCheck
from fairtalk.pairs import PairsChecker as PairsChecker
from fairtalk.pairs import PairSet as PairSet
from fairtalk.pairs import build_pairs as build_pairs
from fairtalk.pairs import check_pairs as check_pairs
from fairtalk.pairs import read_pairs as read_pairs
from fairtalk.pairs import write_pairs as write_pairs
from fairtalk.pipeline import AuditConfig as AuditConfig
from fairtalk.pipeline import Generation as Generation
from fairtalk.pipeline import ScoreOptions as ScoreOptions
from fairtalk.pipeline import audit as audit
from fairtalk.pipeline import audit as run_audit
from fairtalk.pipeline import reproduce_debias as reproduce_debias
from fairtalk.pipeline import respond as respond
from fairtalk.pipeline import score as score
from fairtalk.pipeline import similarity_test as similarity_test
from fairtalk.progress import ProgressCallback as ProgressCallback
from fairtalk.progress import ProgressEvent as ProgressEvent
from fairtalk.prompts.aesop import read_aesop as read_aesop
from fairtalk.prompts.certify import certify_regard as certify_regard
from fairtalk.prompts.completions import generate_completions as generate_completions
from fairtalk.prompts.completions import label_completions as label_completions
from fairtalk.prompts.completions import read_completions as read_completions
from fairtalk.prompts.completions import read_prompts as read_prompts
from fairtalk.prompts.completions import write_prompts as write_prompts
from fairtalk.prompts.data import DataSummary as PromptDataSummary
from fairtalk.prompts.data import PromptData as PromptData
from fairtalk.prompts.filters import filter_prompts as filter_prompts
from fairtalk.prompts.labelling import analyze_prompts as analyze_prompts
from fairtalk.prompts.output import REPORT_FILES as PROMPTS_REPORT_FILES
from fairtalk.prompts.output import write_prompts_report as write_prompts_report
from fairtalk.prompts.paraphrase import STRUCTURES as STRUCTURES
from fairtalk.prompts.paraphrase import ModelParaphraser as ModelParaphraser
from fairtalk.prompts.published import read_published as read_published
from fairtalk.prompts.regard_check import RegardCheck as RegardCheck
from fairtalk.prompts.regard_check import check_labels as check_regard_labels
from fairtalk.prompts.regard_check import read_labels as read_regard_labels
from fairtalk.prompts.regard_check import write_labels as write_regard_labels
from fairtalk.prompts.result import PromptAnalysis as PromptAnalysis
from fairtalk.prompts.sources import PromptSet as PromptSet
from fairtalk.prompts.sources import make_prompts as make_prompts
from fairtalk.prompts.sources import paraphrase_prompts as paraphrase_prompts
from fairtalk.prompts.templates import GroupSet as GroupSet
from fairtalk.prompts.templates import Prompt as Prompt
from fairtalk.prompts.templates import build_prompts as build_prompts
from fairtalk.prompts.templates import default_groups as default_groups
from fairtalk.prompts.templates import load_groups as load_groups
from fairtalk.records import TURN_SEPARATOR as TURN_SEPARATOR
from fairtalk.records import Context as Context
from fairtalk.records import Pair as Pair
from fairtalk.records import Response as Response
from fairtalk.records import Swap as Swap
from fairtalk.records import chat_messages as chat_messages
from fairtalk.records import join_turns as join_turns
from fairtalk.records import split_turns as split_turns
from fairtalk.report import write_report as write_report
from fairtalk.responses import ResponseSet as ResponseSet
from fairtalk.responses import read_responses as read_responses
from fairtalk.responses import responses_from_texts as responses_from_texts
from fairtalk.responses import write_responses as write_responses
from fairtalk.results import AuditResult as AuditResult
from fairtalk.results import AuditRun as AuditRun
from fairtalk.results import AxisRun as AxisRun
from fairtalk.results import ComparedModel as ComparedModel
from fairtalk.results import DebiasComparison as DebiasComparison
from fairtalk.results import GenerationSummary as GenerationSummary
from fairtalk.results import MeasureResult as MeasureResult
from fairtalk.results import ScorerCheck as ScorerCheck
from fairtalk.results import SimilarityResult as SimilarityResult
from fairtalk.stats import pairs_needed as pairs_needed
from fairtalk.store import CachingResponder as CachingResponder
from fairtalk.store import RunStore as RunStore
from fairtalk.training.checkpoints import load_checkpoint as load_checkpoint
from fairtalk.training.config import TrainConfig as TrainConfig
from fairtalk.training.config import TrainResult as TrainResult
from fairtalk.training.loops import train_model as train_model

__all__ = [
    "AttributeList",
    "AuditConfig",
    "AuditResult",
    "AuditRun",
    "AugmentSummary",
    "Augmentation",
    "AugmentedDialogue",
    "AxisRun",
    "BadResponse",
    "BaseResponder",
    "CachingResponder",
    "ComparedModel",
    "Context",
    "Corpus",
    "CorpusError",
    "CorpusMeasure",
    "Coverage",
    "DebiasComparison",
    "DecodingSettings",
    "EmbeddingRegularizer",
    "FairtalkError",
    "Generation",
    "GenerationSummary",
    "GroupSet",
    "InputError",
    "Lexicon",
    "LexiconError",
    "Measure",
    "MeasureResult",
    "ModelParaphraser",
    "OutputError",
    "PROMPTS_REPORT_FILES",
    "Pair",
    "PairSet",
    "PairsCheck",
    "PairsChecker",
    "PoolFilterResult",
    "Prompt",
    "PromptAnalysis",
    "PromptData",
    "PromptDataSummary",
    "PromptSet",
    "RateLimited",
    "RayEngine",
    "ReadSummary",
    "Regard",
    "RegardCheck",
    "Responder",
    "ResponderAborted",
    "ResponderError",
    "ResponderTimeout",
    "Response",
    "ResponseSet",
    "RunStore",
    "STRUCTURES",
    "ScorerCheck",
    "SpecError",
    "StoreError",
    "Swap",
    "TURN_SEPARATOR",
    "chat_messages",
    "join_turns",
    "split_turns",
    "ScoreOptions",
    "SwapResult",
    "Swapper",
    "TrainConfig",
    "TrainResult",
    "TransportError",
    "WordPair",
    "__version__",
    "analyze_prompts",
    "augment",
    "build_pairs",
    "check_pairs",
    "expand_axis",
    "build_prompts",
    "axis_groups",
    "axis_names",
    "builtin_axes",
    "certify_regard",
    "check_regard_labels",
    "completion_options",
    "default_groups",
    "default_measures",
    "filter_pool",
    "filter_prompts",
    "generate_completions",
    "get_measure",
    "identity_terms",
    "jsonable",
    "label_completions",
    "load_attributes",
    "load_checkpoint",
    "load_groups",
    "load_lexicon",
    "load_responder",
    "make_prompts",
    "measure_names",
    "model_prefixes",
    "pairs_needed",
    "ProgressCallback",
    "ProgressEvent",
    "paraphrase_prompts",
    "parse_model_args",
    "read_aesop",
    "read_completions",
    "read_corpus",
    "read_pairs",
    "read_pool",
    "read_prompts",
    "read_published",
    "read_regard_labels",
    "read_responses",
    "reproduce_debias",
    "respond",
    "responses_from_texts",
    "run_audit",
    "audit",
    "similarity_test",
    "SimilarityResult",
    "score",
    "score_unique",
    "train_model",
    "train_regard",
    "write_dialogues",
    "write_pairs",
    "write_pool",
    "write_prompts",
    "write_prompts_report",
    "write_regard_labels",
    "write_report",
    "write_responses",
]

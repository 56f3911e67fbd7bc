"""Offline data generators for four Kaggle-like competitions (modelled on MLE-bench lite).

Each generator is deterministic from a seed and returns train/test tables, the
private answers and the competition's description; the data are synthetic, written
for this project, and small enough that a scikit-learn solution runs in seconds.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pandas as pd


@dataclasses.dataclass
class CompetitionData:
  """What one generator produces; `answers` never reaches an agent's workspace."""

  name: str
  title: str
  description: str  # the body of task.md after the common instructions
  metric: str
  id_column: str
  target_columns: list[str]
  train: pd.DataFrame
  test: pd.DataFrame
  answers: pd.DataFrame
  sample_submission: pd.DataFrame
  tags: list[str]
  difficulty: str


# --- text material -----------------------------------------------------------------------------

_FUNCTION_WORDS = ("the of and to a in that it was he i his you for had is with she as her on at "
                   "by which have not be this but from they all my were are so one there we been "
                   "would or when an what if no then him its into more could some them upon").split()
_SYLLABLES = ("ba be bo da de di do ga ge go ka ke ko la le li lo ma me mi mo na ne no ra re ri ro "
              "sa se si so ta te ti to va ve vo za ze th sh ch wr gl st").split()


def _pseudo_words(rng: np.random.Generator, count: int, used: set[str]) -> list[str]:
  words = []
  while len(words) < count:
    w = "".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 4))))
    if w not in used:
      used.add(w)
      words.append(w)
  return words


def _zipf_probs(n: int, a: float = 1.1) -> np.ndarray:
  p = 1.0 / np.arange(1, n + 1) ** a
  return p / p.sum()


def _ids(prefix: str, n: int, rng: np.random.Generator) -> list[str]:
  # Shuffled, non-sequential ids so row order carries no information.
  numbers = rng.choice(np.arange(10000, 99999), size=n, replace=False)
  return [f"{prefix}{k:05d}" for k in numbers]


# --- 1. author identification (3 classes, multi-class log loss) ----------------------------------

AUTHORS = ("ALD", "BRO", "CAV")


def author_identification(seed: int, n_train: int = 900, n_test: int = 450) -> CompetitionData:
  rng = np.random.default_rng([seed, 1])
  used: set[str] = set(_FUNCTION_WORDS)
  shared = _pseudo_words(rng, 260, used)
  signature = {a: _pseudo_words(rng, 50, used) for a in AUTHORS}
  # Neighbouring authors borrow some of each other's favourite words, so the task is not trivial.
  for i, a in enumerate(AUTHORS):
    b = AUTHORS[(i + 1) % len(AUTHORS)]
    signature[a] += signature[b][:12]
  style = {"ALD": (18, ";", 0.30), "BRO": (11, "!", 0.22), "CAV": (25, ",", 0.26)}
  shared_p, func_p = _zipf_probs(len(shared)), _zipf_probs(len(_FUNCTION_WORDS))

  def sentence(author: str) -> str:
    mean_len, punct, p_sig = style[author]
    n = max(4, int(rng.poisson(mean_len)))
    sig = signature[author]
    sig_p = _zipf_probs(len(sig), 0.8)
    words = []
    for _ in range(n):
      u = rng.random()
      if u < p_sig:
        words.append(sig[rng.choice(len(sig), p=sig_p)])
      elif u < p_sig + 0.45:
        words.append(_FUNCTION_WORDS[rng.choice(len(_FUNCTION_WORDS), p=func_p)])
      else:
        words.append(shared[rng.choice(len(shared), p=shared_p)])
      if rng.random() < 0.06:
        words[-1] += punct if rng.random() < 0.6 else ","
    text = " ".join(words)
    return text[0].upper() + text[1:] + ("." if rng.random() < 0.8 else "?")

  n = n_train + n_test
  labels = rng.choice(AUTHORS, size=n, p=(0.40, 0.31, 0.29))
  texts = [sentence(a) for a in labels]
  ids = _ids("id", n, rng)
  train = pd.DataFrame({"id": ids[:n_train], "text": texts[:n_train], "author": labels[:n_train]})
  test = pd.DataFrame({"id": ids[n_train:], "text": texts[n_train:]})
  answers = pd.DataFrame({"id": ids[n_train:]})
  for a in AUTHORS:
    answers[a] = (labels[n_train:] == a).astype(float)
  sample = pd.DataFrame({"id": test["id"]})
  for a in AUTHORS:
    sample[a] = round(1 / len(AUTHORS), 6)
  description = (
      "Identify the author of each sentence. `train.csv` has columns `id`, `text` and `author` "
      f"(one of {', '.join(AUTHORS)}); `test.csv` has `id` and `text`.\n\n"
      f"Submit, for every test id, the probability of each author: columns `id,{','.join(AUTHORS)}`; "
      "each row's probabilities must sum to 1.\n\n"
      "Metric: multi-class logarithmic loss (lower is better; probabilities are clipped to "
      "[1e-15, 1 - 1e-15]).")
  return CompetitionData("author-identification", "Author identification", description,
                         "multi_class_log_loss", "id", list(AUTHORS), train, test, answers, sample,
                         ["mle", "text", "multiclass"], "medium")


# --- 2. insult detection (binary text, ROC-AUC) ----------------------------------------------------

_INSULTS = ("idiot moron fool clown loser imbecile dimwit halfwit buffoon nitwit creep troll "
            "coward hypocrite liar").split()
_INSULT_ADJ = "stupid pathetic worthless clueless brainless ignorant dumb useless".split()
_TOPICS = ("the game the election this article the movie the new phone the referee the weather "
           "the album the mayor the update the price the traffic the show").split(" ")
_NEUTRAL = [
    "I think {topic} was better than last year",
    "has anyone else noticed {topic} lately",
    "thanks for sharing, {topic} really surprised me",
    "honestly {topic} is overrated",
    "not sure I agree about {topic}",
    "{topic} is a total mess and it is {adj}",
    "great point about {topic}",
    "can someone explain {topic} to me",
    "I lost money because of {topic}, so {adj}",
    "we should talk more about {topic}",
]
_INSULTING = [
    "you are a {insult}",
    "what a {adj} {insult} you are",
    "shut up you {insult}",
    "only a {insult} would say that about {topic}",
    "you {adj} {insult}, nobody cares",
    "go away {insult}",
    "your comment on {topic} is {adj}, just like you",
    "are you always this {adj}?",
]


def insult_detection(seed: int, n_train: int = 900, n_test: int = 450) -> CompetitionData:
  rng = np.random.default_rng([seed, 2])
  topics = [t for t in _TOPICS if t]

  def comment(insult: bool) -> str:
    template = _INSULTING[rng.integers(len(_INSULTING))] if insult else _NEUTRAL[rng.integers(len(_NEUTRAL))]
    text = template.format(topic=topics[rng.integers(len(topics))],
                           insult=_INSULTS[rng.integers(len(_INSULTS))],
                           adj=_INSULT_ADJ[rng.integers(len(_INSULT_ADJ))])
    if rng.random() < 0.3:
      text = text.upper() if rng.random() < 0.3 else text.capitalize()
    if rng.random() < 0.25:
      text += "!!!" if insult else "."
    return '"' + text + '"'

  n = n_train + n_test
  labels = (rng.random(n) < 0.27).astype(int)
  texts = [comment(bool(y)) for y in labels]
  # Label noise as in real moderation data: some insults are missed, some banter is flagged.
  flip = rng.random(n) < 0.07
  labels = np.where(flip, 1 - labels, labels)
  ids = _ids("c", n, rng)
  train = pd.DataFrame({"id": ids[:n_train], "Comment": texts[:n_train], "Insult": labels[:n_train]})
  test = pd.DataFrame({"id": ids[n_train:], "Comment": texts[n_train:]})
  answers = pd.DataFrame({"id": ids[n_train:], "Insult": labels[n_train:].astype(float)})
  sample = pd.DataFrame({"id": test["id"], "Insult": 0.5})
  description = (
      "Detect comments that insult a participant of the conversation. `train.csv` has columns "
      "`id`, `Comment` (the text, quoted) and `Insult` (1 = insulting, 0 = not); `test.csv` has "
      "`id` and `Comment`.\n\nSubmit, for every test id, a score for the comment being an insult "
      "(higher = more likely): columns `id,Insult`.\n\nMetric: area under the ROC curve (higher is better).")
  return CompetitionData("insult-detection", "Detecting insults in social commentary", description,
                         "roc_auc", "id", ["Insult"], train, test, answers, sample,
                         ["mle", "text", "binary"], "easy")


# --- 3. tabular binary classification (ROC-AUC) ---------------------------------------------------

def tabular_binary(seed: int, n_train: int = 1200, n_test: int = 600) -> CompetitionData:
  rng = np.random.default_rng([seed, 3])
  n = n_train + n_test
  x = rng.normal(size=(n, 8))
  x[:, 3] = np.exp(x[:, 3])  # a skewed, positive feature
  region = rng.choice(["north", "south", "east", "west"], size=n, p=(0.4, 0.3, 0.2, 0.1))
  plan = rng.choice(["basic", "plus", "pro"], size=n, p=(0.5, 0.35, 0.15))
  logit = (1.2 * x[:, 0] - 0.8 * x[:, 1] + 0.9 * x[:, 2] * x[:, 4] + 0.6 * np.log(x[:, 3])
           + 1.1 * np.sin(2 * x[:, 5]) + np.where(region == "west", 0.9, 0.0)
           + np.where(plan == "pro", -0.8, np.where(plan == "plus", -0.3, 0.2)) - 0.7)
  y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
  x[rng.random(x.shape) < 0.04] = np.nan  # missing values, as in real tables
  ids = _ids("r", n, rng)
  frame = pd.DataFrame({"id": ids})
  for j in range(8):
    frame[f"f{j}"] = np.round(x[:, j], 5)
  frame["region"], frame["plan"] = region, plan
  train = frame.iloc[:n_train].assign(target=y[:n_train]).reset_index(drop=True)
  test = frame.iloc[n_train:].reset_index(drop=True)
  answers = pd.DataFrame({"id": ids[n_train:], "target": y[n_train:].astype(float)})
  sample = pd.DataFrame({"id": test["id"], "target": 0.5})
  description = (
      "Predict whether a customer churns. `train.csv` has an `id`, numeric features `f0`..`f7` "
      "(some missing), categorical `region` and `plan`, and the binary `target`; `test.csv` has "
      "the same columns without `target`.\n\nSubmit a churn score per test id: columns `id,target`.\n\n"
      "Metric: area under the ROC curve (higher is better).")
  return CompetitionData("tabular-churn", "Customer churn (tabular)", description, "roc_auc", "id",
                         ["target"], train, test, answers, sample, ["mle", "tabular", "binary"], "easy")


# --- 4. two-target regression (mean column-wise RMSLE) -----------------------------------------------

def two_target_regression(seed: int, n_train: int = 1000, n_test: int = 500) -> CompetitionData:
  rng = np.random.default_rng([seed, 4])
  n = n_train + n_test
  spacegroup = rng.choice([12, 33, 167, 194, 206, 227], size=n)
  atoms = rng.choice([10, 20, 30, 40, 60, 80], size=n)
  frac = rng.dirichlet((1.2, 1.0, 0.8), size=n)  # al / ga / in fractions sum to 1
  lattice = rng.uniform(3.0, 25.0, size=(n, 3))
  angle = rng.normal(90, 6, size=(n, 3))
  sg_effect = pd.Series(spacegroup).map({12: 0.05, 33: -0.03, 167: 0.08, 194: 0.0, 206: 0.02, 227: -0.05}).to_numpy()
  volume = lattice.prod(axis=1) / atoms
  formation = np.clip(0.18 + 0.25 * frac[:, 0] * frac[:, 2] - 0.08 * frac[:, 1] + sg_effect
                      + 0.02 * np.log(volume) + rng.normal(0, 0.035, n), 0.0, None)
  bandgap = np.clip(4.8 * frac[:, 0] + 3.2 * frac[:, 1] + 1.1 * frac[:, 2] - 0.004 * (angle[:, 0] - 90) ** 2 / 6
                    + 8 * sg_effect + rng.normal(0, 0.2, n), 0.0, None)
  ids = _ids("m", n, rng)
  frame = pd.DataFrame({
      "id": ids, "spacegroup": spacegroup, "number_of_total_atoms": atoms,
      "percent_atom_al": frac[:, 0].round(4), "percent_atom_ga": frac[:, 1].round(4),
      "percent_atom_in": frac[:, 2].round(4),
      "lattice_vector_1_ang": lattice[:, 0].round(4), "lattice_vector_2_ang": lattice[:, 1].round(4),
      "lattice_vector_3_ang": lattice[:, 2].round(4), "lattice_angle_alpha_degree": angle[:, 0].round(3),
      "lattice_angle_beta_degree": angle[:, 1].round(3), "lattice_angle_gamma_degree": angle[:, 2].round(3),
  })
  targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
  train = frame.iloc[:n_train].assign(**{targets[0]: formation[:n_train].round(5),
                                         targets[1]: bandgap[:n_train].round(5)}).reset_index(drop=True)
  test = frame.iloc[n_train:].reset_index(drop=True)
  answers = pd.DataFrame({"id": ids[n_train:], targets[0]: formation[n_train:].round(5),
                          targets[1]: bandgap[n_train:].round(5)})
  sample = pd.DataFrame({"id": test["id"], targets[0]: 0.1779, targets[1]: 1.8892})
  description = (
      "Predict two properties of candidate transparent-conductor materials from their composition "
      "and lattice. `train.csv` has an `id`, the features (`spacegroup`, `number_of_total_atoms`, "
      "`percent_atom_*`, `lattice_vector_*`, `lattice_angle_*`) and the targets "
      f"`{targets[0]}` and `{targets[1]}`; `test.csv` lacks the targets.\n\n"
      f"Submit both non-negative predictions per test id: columns `id,{targets[0]},{targets[1]}`.\n\n"
      "Metric: root mean squared logarithmic error of each target, averaged over the two "
      "(lower is better).")
  return CompetitionData("materials-regression", "Transparent conductor properties", description,
                         "mean_column_rmsle", "id", targets, train, test, answers, sample,
                         ["mle", "tabular", "regression"], "medium")


COMPETITIONS: dict[str, Callable[[int], CompetitionData]] = {
    "author-identification": author_identification,
    "insult-detection": insult_detection,
    "tabular-churn": tabular_binary,
    "materials-regression": two_target_regression,
}

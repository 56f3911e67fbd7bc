"""A small grammar of scikit-learn/pandas solution programs for the offline MLE competitions.

`sample_program(competition, seed)` draws one whole program (the kind of answer an agent writes
for rl/tasks/mle): which features, which model (a constant baseline, linear/logistic regression,
ridge, naive Bayes, random forest, gradient boosting, kNN), its hyperparameters, with or without
a validation split (and a refit on all rows), and how the submission is written. The same seed
gives the same program. The programs use only what the sandbox runtime has (numpy, pandas,
scikit-learn: sandbox/requirements.txt) and run in seconds on one CPU thread.

`fault=` makes a realistic faulty variant that fails at a known stage:

  wrong_column   a wrong column name right after loading (KeyError on that line)
  fit_shape      the model is fitted on the test features (ValueError at fit, inconsistent rows)
  missing_column the program runs but its submission lacks a required column (grader rejects it)
  wrong_file     the program runs but writes its submission under another file name

`Program.fault_line` is the (1-based) line that raises for the crashing faults. These programs
are the scripted expert's MLE demonstrations (rl/tasks/mle/expert.py) and the fixtures of
tests/test_mle_programs.py.
"""

from __future__ import annotations

import dataclasses
import pathlib
import random
import tempfile
from typing import Any, Callable

from rl.tasks.mle import build, grader

SUBMISSION_FILE = "submission.csv"

# fault -> the stage it fails at
FAULTS: dict[str, str] = {
    "wrong_column": "load",
    "fit_shape": "fit",
    "missing_column": "submission",
    "wrong_file": "write",
}
# The exception a crashing fault raises (None: the program exits 0 and the submission is wrong).
FAULT_EXCEPTIONS: dict[str, str | None] = {
    "wrong_column": "KeyError", "fit_shape": "ValueError", "missing_column": None, "wrong_file": None,
}
WRONG_FILES = ("predictions.csv", "my_submission.csv", "submission_final.csv")


@dataclasses.dataclass(frozen=True)
class Program:
  """One drawn program: its source, the choices that made it and its fault (None = valid)."""

  competition: str
  seed: int
  source: str
  choices: dict[str, Any]
  fault: str | None = None
  fault_line: int | None = None  # 1-based line that raises (wrong_column, fit_shape)
  submission_file: str = SUBMISSION_FILE  # where the program writes its submission

  @property
  def valid(self) -> bool:
    return self.fault is None

  @property
  def stage(self) -> str | None:
    """The stage a faulty program fails at (FAULTS), None for a valid one."""
    return FAULTS.get(self.fault) if self.fault else None


class _Lines:
  """Source lines with named anchors (the lines a fault rewrites)."""

  def __init__(self):
    self.lines: list[str] = []
    self.anchors: dict[str, int] = {}  # name -> 0-based index

  def add(self, *lines: str, anchor: str | None = None) -> None:
    for line in lines:
      if anchor is not None and anchor not in self.anchors:
        self.anchors[anchor] = len(self.lines)
      self.lines.extend(line.split("\n"))

  def text(self) -> str:
    return "\n".join(self.lines).rstrip() + "\n"


def _pick(rng: random.Random, options: Any, weights: Any = None) -> Any:
  options = list(options)
  return options[rng.choices(range(len(options)), weights=weights)[0]]


# --- models --------------------------------------------------------------------------------------

def _forest_boosting_or_knn(rng: random.Random, name: str, kind: str,
                            knn_ks: tuple[int, ...]) -> tuple[str, str, dict[str, Any]] | None:
  """(import, constructor, hyperparameters) of a random forest, gradient boosting or kNN model,
  `kind` "Classifier" or "Regressor"; None for another model name."""
  if name == "random_forest":
    n, depth, leaf = _pick(rng, (40, 80, 120)), _pick(rng, (None, 8, 16)), _pick(rng, (1, 3, 5))
    return (f"from sklearn.ensemble import RandomForest{kind}",
            f"RandomForest{kind}(n_estimators={n}, max_depth={depth}, min_samples_leaf={leaf}, "
            "random_state=0, n_jobs=1)", {"n_estimators": n, "max_depth": depth, "min_samples_leaf": leaf})
  if name == "gradient_boosting":
    it, lr, leaves = _pick(rng, (60, 100, 150)), _pick(rng, (0.05, 0.1, 0.2)), _pick(rng, (15, 31))
    return (f"from sklearn.ensemble import HistGradientBoosting{kind}",
            f"HistGradientBoosting{kind}(max_iter={it}, learning_rate={lr}, max_leaf_nodes={leaves}, "
            "random_state=0)", {"max_iter": it, "learning_rate": lr, "max_leaf_nodes": leaves})
  if name == "knn":
    k, weights = _pick(rng, knn_ks), _pick(rng, ("uniform", "distance"))
    return (f"from sklearn.neighbors import KNeighbors{kind}",
            f'KNeighbors{kind}(n_neighbors={k}, weights="{weights}")', {"n_neighbors": k, "weights": weights})
  return None


def _classifier(rng: random.Random, name: str) -> tuple[str, str, dict[str, Any]]:
  """(import line, constructor expression, hyperparameters) of a classifier."""
  if name == "constant":
    return "from sklearn.dummy import DummyClassifier", 'DummyClassifier(strategy="prior")', {}
  if name == "logistic":
    c = _pick(rng, (0.3, 1.0, 2.0, 4.0, 10.0))
    return ("from sklearn.linear_model import LogisticRegression",
            f"LogisticRegression(C={c}, max_iter=1000)", {"C": c})
  if name == "naive_bayes":
    alpha = _pick(rng, (0.1, 0.3, 1.0))
    return "from sklearn.naive_bayes import MultinomialNB", f"MultinomialNB(alpha={alpha})", {"alpha": alpha}
  shared = _forest_boosting_or_knn(rng, name, "Classifier", knn_ks=(10, 25, 50))
  if shared is not None:
    return shared
  raise ValueError(f"unknown classifier {name!r}")


def _regressor(rng: random.Random, name: str) -> tuple[str, str, dict[str, Any]]:
  if name == "constant":
    return "from sklearn.dummy import DummyRegressor", 'DummyRegressor(strategy="mean")', {}
  if name == "linear":
    return "from sklearn.linear_model import LinearRegression", "LinearRegression()", {}
  if name == "ridge":
    alpha = _pick(rng, (0.1, 1.0, 10.0, 50.0))
    return "from sklearn.linear_model import Ridge", f"Ridge(alpha={alpha})", {"alpha": alpha}
  shared = _forest_boosting_or_knn(rng, name, "Regressor", knn_ks=(5, 10, 20))
  if shared is not None:
    return shared
  raise ValueError(f"unknown regressor {name!r}")


_SCALED = ("logistic", "knn", "linear", "ridge")  # models that may get a StandardScaler


def _model_lines(out: _Lines, rng: random.Random, choices: dict[str, Any], ctor: str, *,
                 sparse: bool) -> None:
  """`model = ...` (optionally in a pipeline with a scaler), recorded in choices."""
  scale = choices["model"] in _SCALED and rng.random() < 0.6
  choices["scale"] = scale
  if scale:
    scaler = "StandardScaler(with_mean=False)" if sparse else "StandardScaler()"
    out.add(f"model = make_pipeline({scaler}, {ctor})", anchor="model")
  else:
    out.add(f"model = {ctor}", anchor="model")


def _imports(choices: dict[str, Any], model_import: str, *, numpy: bool, extra: tuple[str, ...] = ()) -> list[str]:
  lines = (["import numpy as np"] if numpy else []) + ["import pandas as pd"] + list(extra) + [model_import]
  if choices.get("scale"):
    lines += ["from sklearn.pipeline import make_pipeline", "from sklearn.preprocessing import StandardScaler"]
  if choices.get("validation"):
    lines += ["from sklearn.model_selection import train_test_split", choices["metric_import"]]
  return sorted(set(lines), key=lambda s: (not s.startswith("import "), s))


def _fit_lines(out: _Lines, choices: dict[str, Any], *, x: str, y: str, indent: str = "") -> None:
  """Validation split (optional), the fit (anchor `fit`: X and y of the fit statement) and the
  refit on all rows (optional)."""
  if choices["validation"]:
    ts, rs = choices["test_size"], choices["split_seed"]
    stratify = f", stratify={y}" if choices.get("stratify") else ""
    out.add(f"{indent}x_train, x_valid, y_train, y_valid = train_test_split({x}, {y}, test_size={ts}, "
            f"random_state={rs}{stratify})")
    out.add(f"{indent}model.fit(x_train, y_train)", anchor="fit")
    out.add(f"{indent}{choices['valid_print']}")
    if choices["refit"]:
      out.add(f"{indent}model.fit({x}, {y})")
  else:
    out.add(f"{indent}model.fit({x}, {y})", anchor="fit")


def _validation_choices(rng: random.Random, choices: dict[str, Any], *, classification: bool) -> None:
  choices["validation"] = rng.random() < 0.5
  if choices["validation"]:
    choices["test_size"] = _pick(rng, (0.15, 0.2, 0.25))
    choices["split_seed"] = _pick(rng, (0, 1, 7, 42))
    choices["stratify"] = classification and rng.random() < 0.5
    choices["refit"] = rng.random() < 0.6


# --- text competitions ----------------------------------------------------------------------------

_TEXT = {
    "author-identification": {"text": "text", "target": "author", "classes": ("ALD", "BRO", "CAV"),
                              "wrong_target": ("Author", "label", "authors")},
    "insult-detection": {"text": "Comment", "target": "Insult", "classes": None,
                         "wrong_target": ("insult", "label", "is_insult")},
}


def _text_program(competition: str, rng: random.Random) -> tuple[_Lines, dict[str, Any]]:
  spec = _TEXT[competition]
  multiclass = spec["classes"] is not None
  model = _pick(rng, ("constant", "logistic", "naive_bayes", "random_forest", "gradient_boosting", "knn"),
                (1, 4, 3, 2, 2, 2))
  vec = _pick(rng, ("tfidf", "count"))
  ngram = _pick(rng, ((1, 1), (1, 2)))
  max_features = 300 if model == "gradient_boosting" else _pick(rng, (None, 1000, 3000))
  choices: dict[str, Any] = {"features": f"{vec} {ngram}", "vectorizer": vec, "ngram_range": ngram,
                             "max_features": max_features, "model": model}
  vec_args = [f"ngram_range={ngram}"]
  if max_features:
    vec_args.append(f"max_features={max_features}")
  if vec == "tfidf" and rng.random() < 0.5:
    vec_args.append("sublinear_tf=True")
  if vec == "count" and rng.random() < 0.4:
    vec_args.append("binary=True")
  if rng.random() < 0.3:
    vec_args.append("min_df=2")
  vec_class = "TfidfVectorizer" if vec == "tfidf" else "CountVectorizer"
  model_import, ctor, hyper = _classifier(rng, model)
  choices["hyperparameters"] = hyper
  _validation_choices(rng, choices, classification=True)
  if multiclass:
    choices["metric_import"] = "from sklearn.metrics import log_loss"
    choices["valid_print"] = 'print("validation log loss:", log_loss(y_valid, model.predict_proba(x_valid)))'
    choices["writer"] = _pick(rng, ("frame", "loop", "sample"))
  else:
    choices["metric_import"] = "from sklearn.metrics import roc_auc_score"
    choices["valid_print"] = 'print("validation AUC:", roc_auc_score(y_valid, model.predict_proba(x_valid)[:, 1]))'
    choices["writer"] = _pick(rng, ("frame", "sample"))
  dense = model == "gradient_boosting"
  body = _Lines()
  body.add('train = pd.read_csv("train.csv")', 'test = pd.read_csv("test.csv")')
  body.add(f'y = train["{spec["target"]}"]', anchor="target")
  body.add(f"vectorizer = {vec_class}({', '.join(vec_args)})")
  to_dense = ".toarray()" if dense else ""
  body.add(f'x = vectorizer.fit_transform(train["{spec["text"]}"]){to_dense}')
  body.add(f'x_test = vectorizer.transform(test["{spec["text"]}"]){to_dense}')
  _model_lines(body, rng, choices, ctor, sparse=not dense)
  _fit_lines(body, choices, x="x", y="y")
  body.add("probabilities = model.predict_proba(x_test)")
  target, file = spec["target"], SUBMISSION_FILE
  if multiclass:
    if choices["writer"] == "frame":
      body.add("submission = pd.DataFrame(probabilities, columns=model.classes_)",
               'submission.insert(0, "id", test["id"])', anchor="write")
    elif choices["writer"] == "loop":
      body.add('submission = pd.DataFrame({"id": test["id"]})', anchor="write")
      body.add("for k, author in enumerate(model.classes_):", "  submission[author] = probabilities[:, k]")
    else:
      body.add('submission = pd.read_csv("sample_submission.csv")',
               "submission[list(model.classes_)] = probabilities", anchor="write")
  else:
    if choices["writer"] == "frame":
      body.add(f'submission = pd.DataFrame({{"id": test["id"], "{target}": probabilities[:, 1]}})', anchor="write")
    else:
      body.add('submission = pd.read_csv("sample_submission.csv")',
               f'submission["{target}"] = probabilities[:, 1]', anchor="write")
  body.add(f'submission.to_csv("{file}", index=False)', anchor="to_csv")
  body.add('print("wrote", len(submission), "rows")')
  head = _Lines()
  extra = (f"from sklearn.feature_extraction.text import {vec_class}",)
  head.add(*_imports(choices, model_import, numpy=False, extra=extra))
  return _join(head, body), choices


# --- tabular churn -------------------------------------------------------------------------------

def _churn_program(rng: random.Random) -> tuple[_Lines, dict[str, Any]]:
  model = _pick(rng, ("constant", "logistic", "random_forest", "gradient_boosting", "knn"), (1, 4, 3, 3, 2))
  feature_set = _pick(rng, ("all", "numeric", "subset"))
  encoding = "none" if feature_set == "numeric" else _pick(rng, ("dummies", "codes"))
  impute = _pick(rng, ("median", "mean", "zero"))
  log_f3 = rng.random() < 0.5
  choices: dict[str, Any] = {"features": feature_set, "encoding": encoding, "impute": impute, "log_f3": log_f3,
                             "model": model}
  model_import, ctor, hyper = _classifier(rng, model)
  choices["hyperparameters"] = hyper
  _validation_choices(rng, choices, classification=True)
  choices["metric_import"] = "from sklearn.metrics import roc_auc_score"
  choices["valid_print"] = 'print("validation AUC:", roc_auc_score(y_valid, model.predict_proba(x_valid)[:, 1]))'
  choices["writer"] = _pick(rng, ("frame", "sample"))
  numeric = ([f"f{j}" for j in range(8)] if feature_set != "subset" else ["f0", "f1", "f2", "f3", "f4", "f5"])
  body = _Lines()
  body.add('train = pd.read_csv("train.csv")', 'test = pd.read_csv("test.csv")')
  body.add('y = train["target"]', anchor="target")
  body.add(f"numeric = {numeric!r}")
  body.add('frame = pd.concat([train.drop(columns=["target"]), test], ignore_index=True)')
  if log_f3:
    body.add('frame["f3"] = np.log(frame["f3"])')
  fill = {"median": "frame[numeric].median()", "mean": "frame[numeric].mean()", "zero": "0.0"}[impute]
  body.add(f"frame[numeric] = frame[numeric].fillna({fill})")
  if encoding == "dummies":
    body.add('frame = pd.get_dummies(frame, columns=["region", "plan"], dtype=float)')
    body.add('features = [c for c in frame.columns if c != "id" and c not in ("f6", "f7")]'
             if feature_set == "subset" else 'features = [c for c in frame.columns if c != "id"]')
  elif encoding == "codes":
    body.add('for column in ("region", "plan"):', '  frame[column] = frame[column].astype("category").cat.codes')
    body.add('features = numeric + ["region", "plan"]')
  else:
    body.add("features = numeric")
  body.add("x = frame[features].iloc[:len(train)].to_numpy()", "x_test = frame[features].iloc[len(train):].to_numpy()")
  _model_lines(body, rng, choices, ctor, sparse=False)
  _fit_lines(body, choices, x="x", y="y")
  body.add("scores = model.predict_proba(x_test)[:, 1]")
  if choices["writer"] == "frame":
    body.add('submission = pd.DataFrame({"id": test["id"], "target": scores})', anchor="write")
  else:
    body.add('submission = pd.read_csv("sample_submission.csv")', 'submission["target"] = scores', anchor="write")
  body.add(f'submission.to_csv("{SUBMISSION_FILE}", index=False)', anchor="to_csv")
  body.add('print("wrote", len(submission), "rows")')
  head = _Lines()
  head.add(*_imports(choices, model_import, numpy=log_f3))
  return _join(head, body), choices


# --- materials regression ------------------------------------------------------------------------

_MATERIAL_TARGETS = ("formation_energy_ev_natom", "bandgap_energy_ev")


def _materials_program(rng: random.Random) -> tuple[_Lines, dict[str, Any]]:
  model = _pick(rng, ("constant", "linear", "ridge", "random_forest", "gradient_boosting", "knn"), (1, 2, 3, 3, 3, 2))
  feature_set = _pick(rng, ("all", "composition", "all+volume"))
  spacegroup = _pick(rng, ("numeric", "dummies"))
  log_target = rng.random() < 0.6
  choices: dict[str, Any] = {"features": feature_set, "spacegroup": spacegroup, "log_target": log_target,
                             "model": model}
  model_import, ctor, hyper = _regressor(rng, model)
  choices["hyperparameters"] = hyper
  _validation_choices(rng, choices, classification=False)
  choices["metric_import"] = "from sklearn.metrics import mean_squared_error"
  choices["valid_print"] = ('print(target, "validation RMSE:", '
                            "mean_squared_error(y_valid, model.predict(x_valid)) ** 0.5)")
  choices["writer"] = _pick(rng, ("frame", "sample"))
  body = _Lines()
  body.add('train = pd.read_csv("train.csv")', 'test = pd.read_csv("test.csv")')
  body.add(f"targets = {list(_MATERIAL_TARGETS)!r}")
  body.add("labels = train[targets]", anchor="target")
  body.add("frame = pd.concat([train.drop(columns=targets), test], ignore_index=True)")
  if feature_set == "composition":
    body.add('features = ["spacegroup", "number_of_total_atoms", "percent_atom_al", "percent_atom_ga", '
             '"percent_atom_in"]')
  else:
    if feature_set == "all+volume":
      body.add('frame["volume_per_atom"] = (frame["lattice_vector_1_ang"] * frame["lattice_vector_2_ang"]',
               '                           * frame["lattice_vector_3_ang"] / frame["number_of_total_atoms"])')
    body.add('features = [c for c in frame.columns if c != "id"]')
  if spacegroup == "dummies":
    body.add('frame = pd.get_dummies(frame, columns=["spacegroup"], dtype=float)',
             'features = [c for c in frame.columns if c in features or c.startswith("spacegroup_")]')
  body.add("x = frame[features].iloc[:len(train)].to_numpy(dtype=float)",
           "x_test = frame[features].iloc[len(train):].to_numpy(dtype=float)")
  if choices["writer"] == "frame":
    body.add('submission = pd.DataFrame({"id": test["id"]})', anchor="write")
  else:
    body.add('submission = pd.read_csv("sample_submission.csv")', anchor="write")
  body.add("for target in targets:", anchor="loop")
  body.add(f"  y = {'np.log1p(labels[target])' if log_target else 'labels[target]'}")
  lines = _Lines()
  _model_lines(lines, rng, choices, ctor, sparse=False)
  _fit_lines(lines, choices, x="x", y="y")
  for line in lines.lines:
    body.add("  " + line, anchor="fit" if line.startswith("model.fit") and "fit" not in body.anchors else None)
  pred = "np.expm1(model.predict(x_test))" if log_target else "model.predict(x_test)"
  body.add(f"  submission[target] = np.clip({pred}, 0, None)")
  body.add(f'submission.to_csv("{SUBMISSION_FILE}", index=False)', anchor="to_csv")
  body.add('print("wrote", len(submission), "rows")')
  head = _Lines()
  head.add(*_imports(choices, model_import, numpy=True))
  return _join(head, body), choices


def _join(head: _Lines, body: _Lines) -> _Lines:
  out = _Lines()
  out.lines = head.lines + [""] + body.lines
  out.anchors = {k: v + len(head.lines) + 1 for k, v in body.anchors.items()}
  return out


_BUILDERS: dict[str, Callable[[random.Random], tuple[_Lines, dict[str, Any]]]] = {
    "author-identification": lambda rng: _text_program("author-identification", rng),
    "insult-detection": lambda rng: _text_program("insult-detection", rng),
    "tabular-churn": _churn_program,
    "materials-regression": _materials_program,
}
COMPETITIONS = tuple(_BUILDERS)


# --- faults ----------------------------------------------------------------------------------------

def _apply_fault(competition: str, lines: _Lines, fault: str, rng: random.Random) -> tuple[int | None, str]:
  """Rewrites `lines` in place; returns (the 1-based line that raises or None, the submission file)."""
  src = lines.lines
  if fault == "wrong_column":
    i = lines.anchors["target"]
    if competition == "materials-regression":
      wrong = _pick(rng, ('["formation_energy", "bandgap_energy_ev"]', '["formation_energy_ev_natom", "bandgap"]',
                          '["formation_energy_ev", "bandgap_energy_ev"]'))
      src[i] = f"labels = train[{wrong}]"
    else:
      right = _TEXT[competition]["target"] if competition in _TEXT else "target"
      wrong = _pick(rng, _TEXT[competition]["wrong_target"] if competition in _TEXT else ("churn", "Target", "label"))
      src[i] = src[i].replace(f'"{right}"', f'"{wrong}"')
    return i + 1, SUBMISSION_FILE
  if fault == "fit_shape":
    i = lines.anchors["fit"]
    indent = src[i][:len(src[i]) - len(src[i].lstrip())]
    y = src[i].strip()[len("model.fit("):-1].split(", ")[1]
    src[i] = f"{indent}model.fit(x_test, {y})"
    return i + 1, SUBMISSION_FILE
  if fault == "missing_column":
    i = lines.anchors["to_csv"]
    if competition == "author-identification":
      # the predicted label instead of one probability per author
      src[i:i] = ['submission = pd.DataFrame({"id": test["id"], "author": model.predict(x_test)})']
    elif competition == "materials-regression":
      # a fresh frame and only the first target (a left-over from trying one target first)
      src[lines.anchors["write"]] = 'submission = pd.DataFrame({"id": test["id"]})'
      src[lines.anchors["loop"]] = "for target in targets[:1]:  # formation energy first"
    else:
      target = "Insult" if competition == "insult-detection" else "target"
      wrong = _pick(rng, ("prediction", "score", target.lower() + "_probability"))
      src[i:i] = [f'submission = submission.rename(columns={{"{target}": "{wrong}"}})']
    return None, SUBMISSION_FILE
  if fault == "wrong_file":
    i = lines.anchors["to_csv"]
    name = _pick(rng, WRONG_FILES)
    src[i] = src[i].replace(f'"{SUBMISSION_FILE}"', f'"{name}"')
    return None, name
  raise ValueError(f"unknown fault {fault!r}; known faults: {', '.join(FAULTS)}")


def sample_program(competition: str, seed: int, *, fault: str | None = None) -> Program:
  """One program for `competition`, the same for the same (competition, seed, fault).

  `fault`: None (a valid program), one of FAULTS, or "random" (one of them, drawn from the seed).
  A faulty program is the valid program of the same seed with its fault applied.
  """
  if competition not in _BUILDERS:
    raise ValueError(f"no program grammar for MLE competition {competition!r}; known: {', '.join(_BUILDERS)}")
  rng = random.Random(f"mle-program:{competition}:{int(seed)}")
  lines, choices = _BUILDERS[competition](rng)
  choices = {k: v for k, v in choices.items() if k not in ("metric_import", "valid_print")}
  if fault == "random":
    fault = _pick(random.Random(f"mle-fault:{competition}:{int(seed)}"), FAULTS)
  fault_line, file = None, SUBMISSION_FILE
  if fault is not None:
    fault_line, file = _apply_fault(competition, lines, fault,
                                    random.Random(f"mle-fault-detail:{competition}:{int(seed)}"))
  return Program(competition, int(seed), lines.text(), choices, fault, fault_line, file)


def sample_programs(competition: str, n: int, *, seed: int = 0, fault_prob: float = 0.0) -> list[Program]:
  """`n` programs of seeds seed, seed+1, ...; a `fault_prob` share (drawn per program) faulty."""
  out = []
  for k in range(n):
    s = seed + k
    faulty = fault_prob > 0 and random.Random(f"mle-faulty:{competition}:{s}").random() < fault_prob
    out.append(sample_program(competition, s, fault="random" if faulty else None))
  return out


# --- running drawn programs (trusted: our own grammar's output) --------------------------------------

def run_on_host(task_dir: Any, programs: list[Program], *, timeout_s: float = 600.0) -> list[dict[str, Any]]:
  """Runs `programs` (trusted: drawn from this grammar) one after another in ONE interpreter of the
  sandbox runtime (`sandbox.runtime_env.runtime_python`, one OpenMP thread), each in its own copy of
  the task's repo/, and grades each workspace. Returns per program: `exception` (type name or
  None), `line` (the program line that raised), `runtime_s`, the grade (`valid`, `score`,
  `normalized_score`, `error`) and `files` (the workspace's files after the run).

  Agents' programs run in the sandbox (`rl.tasks.mle.runner.run_and_grade`), never here.
  """
  task_dir = pathlib.Path(task_dir)
  with tempfile.TemporaryDirectory(prefix="mle_programs_") as tmp:
    workspaces, runs, failure = build.run_programs_batch(
        task_dir, [(f"p{k}", program.source) for k, program in enumerate(programs)], tmp, timeout_s=timeout_s)
    if len(runs) != len(workspaces):
      raise RuntimeError(f"the program driver stopped after {len(runs)} of {len(workspaces)} programs: {failure}")
    out = []
    for workspace, run in zip(workspaces, runs):
      grade = grader.grade_workspace(task_dir, workspace)
      files = sorted(p.name for p in workspace.iterdir())
      out.append({"runtime_s": run["runtime_s"], "exception": run["exception"], "line": run["line"],
                  **grade.to_dict(), "files": files})
    return out

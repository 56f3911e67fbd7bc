"""Reference solutions (constant, linear, gradient boosting) for the MLE competitions.

They are whole programs, like an agent's answer: read `train.csv` and `test.csv` from
the working directory and write `submission.csv`. Their scores form each task's
small synthetic leaderboard, and the linear one doubles as the task's reference fix.
"""

from __future__ import annotations

REFERENCE_NAMES = ("constant", "linear", "gradient_boosting")

_AUTHOR = {
    "constant": '''\
import pandas as pd

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
prior = train["author"].value_counts(normalize=True)
submission = pd.DataFrame({"id": test["id"]})
for author in sorted(prior.index):
  submission[author] = prior[author]
submission.to_csv("submission.csv", index=False)
''',
    "linear": '''\
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2)
x_train = vectorizer.fit_transform(train["text"])
model = LogisticRegression(C=4.0, max_iter=1000)
model.fit(x_train, train["author"])
probabilities = model.predict_proba(vectorizer.transform(test["text"]))
submission = pd.DataFrame(probabilities, columns=model.classes_)
submission.insert(0, "id", test["id"])
submission.to_csv("submission.csv", index=False)
''',
    "gradient_boosting": '''\
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.feature_extraction.text import CountVectorizer

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
vectorizer = CountVectorizer(max_features=300)
x_train = vectorizer.fit_transform(train["text"]).toarray()
model = HistGradientBoostingClassifier(max_iter=100, learning_rate=0.1, random_state=0)
model.fit(x_train, train["author"])
probabilities = model.predict_proba(vectorizer.transform(test["text"]).toarray())
submission = pd.DataFrame(probabilities, columns=model.classes_)
submission.insert(0, "id", test["id"])
submission.to_csv("submission.csv", index=False)
''',
}

_INSULT = {
    "constant": '''\
import pandas as pd

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
submission = pd.DataFrame({"id": test["id"], "Insult": train["Insult"].mean()})
submission.to_csv("submission.csv", index=False)
''',
    "linear": '''\
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
model = LogisticRegression(C=2.0, max_iter=1000)
model.fit(vectorizer.fit_transform(train["Comment"]), train["Insult"])
scores = model.predict_proba(vectorizer.transform(test["Comment"]))[:, 1]
pd.DataFrame({"id": test["id"], "Insult": scores}).to_csv("submission.csv", index=False)
''',
    "gradient_boosting": '''\
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.feature_extraction.text import CountVectorizer

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
vectorizer = CountVectorizer(max_features=300, binary=True)
model = HistGradientBoostingClassifier(max_iter=100, random_state=0)
model.fit(vectorizer.fit_transform(train["Comment"]).toarray(), train["Insult"])
scores = model.predict_proba(vectorizer.transform(test["Comment"]).toarray())[:, 1]
pd.DataFrame({"id": test["id"], "Insult": scores}).to_csv("submission.csv", index=False)
''',
}

_TABULAR = {
    "constant": '''\
import pandas as pd

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
pd.DataFrame({"id": test["id"], "target": train["target"].mean()}).to_csv("submission.csv", index=False)
''',
    "linear": '''\
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
numeric = [f"f{j}" for j in range(8)]
categorical = ["region", "plan"]
features = make_column_transformer(
    (make_pipeline(SimpleImputer(), StandardScaler()), numeric),
    (OneHotEncoder(handle_unknown="ignore"), categorical))
model = make_pipeline(features, LogisticRegression(max_iter=1000))
model.fit(train[numeric + categorical], train["target"])
scores = model.predict_proba(test[numeric + categorical])[:, 1]
pd.DataFrame({"id": test["id"], "target": scores}).to_csv("submission.csv", index=False)
''',
    "gradient_boosting": '''\
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
features = [c for c in test.columns if c != "id"]
for column in ("region", "plan"):
  train[column] = train[column].astype("category")
  test[column] = pd.Categorical(test[column], categories=train[column].cat.categories)
model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.06, categorical_features="from_dtype",
                                       random_state=0)
model.fit(train[features], train["target"])
scores = model.predict_proba(test[features])[:, 1]
pd.DataFrame({"id": test["id"], "target": scores}).to_csv("submission.csv", index=False)
''',
}

_MATERIALS = {
    "constant": '''\
import numpy as np
import pandas as pd

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
submission = pd.DataFrame({"id": test["id"]})
for target in targets:
  # The constant that minimises RMSLE is the back-transformed mean of log1p(y).
  submission[target] = np.expm1(np.log1p(train[target]).mean())
submission.to_csv("submission.csv", index=False)
''',
    "linear": '''\
import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.compose import make_column_transformer

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
features = [c for c in test.columns if c != "id"]
numeric = [c for c in features if c != "spacegroup"]
submission = pd.DataFrame({"id": test["id"]})
for target in targets:
  model = make_pipeline(make_column_transformer((StandardScaler(), numeric),
                                                (OneHotEncoder(handle_unknown="ignore"), ["spacegroup"])),
                        Ridge(alpha=1.0))
  model.fit(train[features], np.log1p(train[target]))
  submission[target] = np.clip(np.expm1(model.predict(test[features])), 0, None)
submission.to_csv("submission.csv", index=False)
''',
    "gradient_boosting": '''\
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
features = [c for c in test.columns if c != "id"]
submission = pd.DataFrame({"id": test["id"]})
for target in targets:
  model = HistGradientBoostingRegressor(max_iter=150, learning_rate=0.08, random_state=0)
  model.fit(train[features], np.log1p(train[target]))
  submission[target] = np.clip(np.expm1(model.predict(test[features])), 0, None)
submission.to_csv("submission.csv", index=False)
''',
}

REFERENCES: dict[str, dict[str, str]] = {
    "author-identification": _AUTHOR,
    "insult-detection": _INSULT,
    "tabular-churn": _TABULAR,
    "materials-regression": _MATERIALS,
}

"""One place for words: i18n/<lang>.toml read by kansoku.words (and by Hugo)."""

import pytest

from kansoku import parsers, words
from kansoku.errors import KansokuError
from kansoku.parsers.base import MetricDef


def test_both_languages_have_the_same_keys():
    assert set(words.table("ja")) == set(words.table("en"))


def test_argument_and_plural_forms():
    assert words.t("ja", "fiscal_year", 2017) == "2017 年度"
    assert words.both("fiscal_year", 2013)["en"] == "FY2013"
    assert words.t("en", "n_runs", 1) == "1 run" and words.t("en", "n_runs", 3) == "3 runs"


def test_unknown_key_names_the_file():
    with pytest.raises(KeyError, match=r"ja\.toml.*no string \[no_such_word\]"):
        words.t("ja", "no_such_word")


def test_named_arguments_as_hugo_writes_them():
    assert words.t("en", "cell_spread", "1–2", n=3) == "range over runs 1–2 (n = 3)"
    with pytest.raises(KeyError):  # a named argument the word does not have filled in is a bug, not a blank
        words.t("en", "cell_spread", "1–2", m=3)


def test_every_parser_metric_has_its_label_in_every_language():
    missing = [(m.name, lang) for m in parsers.catalogue() for lang in words.LANGS
               if not words.has(f"metric_{m.name}", lang)]
    assert missing == []


def test_a_metric_without_its_word_is_an_error_naming_the_metric_and_the_file():
    metric = MetricDef("metric_nobody_labelled", "SELECT NULL AS run_id, 1 AS value", "ms", False)  # declaring it works
    for lang in words.LANGS:
        with pytest.raises(KansokuError, match=rf"{lang}\.toml: no label for the metric 'metric_nobody_labelled'.*"
                                               r"\[metric_metric_nobody_labelled\]"):
            metric.label(lang)
    assert MetricDef("tps", "SELECT 1", "tps", True).label("en") == words.t("en", "metric_tps")

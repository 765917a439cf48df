"""Chinese surnames as a prior on a name's first character: common, listed in the classic lists, or unknown.

A recognizer that reads 昊 for 吴 or 间 for 陶 gives a name no one has; the surname tables let the re-reading
step (stages/extraction/lexicon_reread.py) prefer a surname the recognizer also saw. Three coarse classes
with log-priors from published population shares: the ~120 most common surnames cover about 85% of people
(about 0.5% each on average), the other listed surnames most of the rest (about 0.01% each), and any other
character as a surname is rarer still (taken as 0.0002%).
"""
from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources

# the most frequent surnames in China's household registration statistics (about 85% of the population)
COMMON: frozenset[str] = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马胡朱郭何罗高林郑梁谢唐许冯宋韩邓彭曹曾田于肖潘袁董叶杜丁蒋程余吕魏蔡苏任卢沈"
    "姜姚钟崔陆谭汪石付贾范金方韦夏廖侯白孟邹秦尹江熊薛邱闫段雷季史陶毛贺龙万顾关郝孔向龚邵钱武汤戴严文常"
    "牛莫洪米康温代赖施覃安傅黎易乔齐葛柳殷谷俞"
)
LOG_PRIOR_COMMON = math.log(5e-3)
LOG_PRIOR_LISTED = math.log(1e-4)
LOG_PRIOR_UNKNOWN = math.log(2e-6)
# given names: about 15% have one character, most of the rest two, very few three (census name studies); a
# particular character of a given name, averaged over the ~1,000 in common use, about 1e-3
LOG_GIVEN_LENGTH = {1: math.log(0.15), 2: math.log(0.84), 3: math.log(0.01)}
LOG_GIVEN_CHAR = math.log(1e-3)


@lru_cache(maxsize=1)
def listed() -> frozenset[str]:
    """Every surname of the bundled classic list (single and compound) plus :data:`COMMON`."""
    text = resources.files("stages.postprocess").joinpath("data/surnames_classic.json").read_text(encoding="utf-8")
    return frozenset(json.loads(text)["surnames"]) | COMMON


@lru_cache(maxsize=1)
def compound() -> frozenset[str]:
    """The listed two-character surnames (欧阳, 司马, ...)."""
    return frozenset(s for s in listed() if len(s) == 2)


def log_prior(surname: str) -> float:
    """Coarse log-probability that a person's surname is ``surname``."""
    if surname in COMMON:
        return LOG_PRIOR_COMMON
    return LOG_PRIOR_LISTED if surname in listed() else LOG_PRIOR_UNKNOWN


def split_surname(name: str) -> tuple[str, str]:
    """(surname, given name): a listed compound surname when the name starts with one, else the first character."""
    if len(name) >= 3 and name[:2] in compound():
        return name[:2], name[2:]
    return name[:1], name[1:]


def log_name_prior(surname: str, given_length: int) -> float:
    """Coarse log-probability of a name's shape: its surname and the length of its given name (the given
    name's characters themselves are scored by the caller, :data:`LOG_GIVEN_CHAR` each)."""
    return log_prior(surname) + LOG_GIVEN_LENGTH.get(given_length, math.log(1e-3))

"""The facts of one synthetic policy: people, money, dates, company (before any formatting)."""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from samples.synth import vocab
from samples.synth.idnumber import make_id
from samples.synth.rand import chance

FIELD_KEYS: tuple[str, ...] = (
    "policy_number", "insurer", "product_name",
    "policyholder_name", "policyholder_id_number", "policyholder_phone", "policyholder_address",
    "insured_name", "insured_id_number", "beneficiary_name",
    "sum_insured", "premium", "effective_date", "expiry_date", "issue_date",
)
# Fields a document may leave out (never policy_number); ~20% of documents omit one or two of these.
OPTIONAL_FIELDS: tuple[str, ...] = (
    "policyholder_phone", "policyholder_address", "beneficiary_name", "issue_date", "premium",
    "insured_id_number", "product_name", "expiry_date",
)
MOBILE_PREFIXES: tuple[str, ...] = (
    "130", "131", "132", "133", "134", "135", "136", "137", "138", "139", "150", "151", "152", "153", "155",
    "156", "157", "158", "159", "170", "173", "176", "177", "178", "180", "181", "182", "183", "184", "185",
    "186", "187", "188", "189", "191", "193", "195", "198", "199",
)
ROUND_SUMS_YUAN: tuple[int, ...] = (
    50_000, 100_000, 150_000, 200_000, 300_000, 500_000, 800_000, 1_000_000, 1_500_000, 2_000_000, 3_000_000, 5_000_000,
)


@dataclass(frozen=True)
class Person:
    name: str
    male: bool
    birth: dt.date
    id_number: str
    phone: str
    address: str


@dataclass(frozen=True)
class Company:
    name: str
    short: str
    hotline: str
    address: str
    postcode: str
    website: str
    kind: str


@dataclass(frozen=True)
class PolicyFacts:
    company: Company
    product: str
    policyholder: Person
    insured: Person
    relation: str  # insured's relation to the policyholder
    beneficiary: str | None  # a name, "法定", or None when not stated
    sum_cents: int
    premium_cents: int
    effective: dt.date
    expiry: dt.date
    issue: dt.date
    term_text: str  # e.g. "1年", "20年", "至70周岁"
    payment_mode: str
    payment_years: str
    agent_name: str
    agent_code: str
    branch: str
    absent: frozenset[str]


def add_years(date: dt.date, years: int) -> dt.date:
    """Same month/day ``years`` later; 29 Feb becomes 28 Feb in a non-leap year."""
    try:
        return date.replace(year=date.year + years)
    except ValueError:
        return date.replace(year=date.year + years, day=28)


def random_date(rng: random.Random, start: dt.date, end: dt.date) -> dt.date:
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def make_name(rng: random.Random, male: bool, surname: str | None = None) -> str:
    if surname is None:
        surname = rng.choice(vocab.COMPOUND_SURNAMES) if chance(rng, 0.06) else rng.choice(vocab.SURNAMES)
    pool = vocab.GIVEN_MALE if male else vocab.GIVEN_FEMALE
    given_len = 1 if (len(surname) == 2 or chance(rng, 0.3)) else 2
    return surname + "".join(rng.choice(pool) for _ in range(given_len))


def make_address(rng: random.Random, region: tuple[str, str, str, str]) -> str:
    _, province, city, district = region
    street = rng.choice(vocab.STREET_STEMS) + rng.choice(vocab.STREET_KINDS)
    number = f"{rng.randint(1, 999)}号"
    tail_kind = rng.random()
    if tail_kind < 0.45:
        tail = f"{rng.choice(vocab.ESTATES)}{rng.randint(1, 30)}栋{rng.randint(1, 6)}单元{rng.randint(1, 33)}{rng.randint(1, 4):02d}室"
    elif tail_kind < 0.7:
        tail = f"{rng.randint(1, 20)}号楼{rng.randint(1, 28)}{rng.randint(1, 8):02d}室"
    elif tail_kind < 0.85:
        tail = f"{rng.choice(vocab.TOWERS)}{rng.randint(2, 40)}层"
    else:
        tail = ""
    return f"{province}{city}{district}{street}{number}{tail}"


def make_phone(rng: random.Random) -> str:
    return rng.choice(MOBILE_PREFIXES) + f"{rng.randint(0, 99_999_999):08d}"


def make_person(rng: random.Random, birth: dt.date, male: bool, surname: str | None = None) -> Person:
    region = rng.choice(vocab.REGIONS)
    home = region if chance(rng, 0.6) else rng.choice(vocab.REGIONS)
    return Person(
        name=make_name(rng, male, surname),
        male=male,
        birth=birth,
        id_number=make_id(region[0], birth, rng.randint(0, 999), male),
        phone=make_phone(rng),
        address=make_address(rng, home),
    )


def make_company(rng: random.Random) -> Company:
    ins = rng.choice(vocab.INSURERS)
    crng = random.Random(ins.domain)  # a company's contact details are fixed across documents
    hotline = f"95{crng.randint(100, 999)}" if crng.random() < 0.6 else f"400-{crng.randint(100, 999)}-{crng.randint(1000, 9999)}"
    region = crng.choice(vocab.REGIONS)
    address = f"{region[1]}{region[2]}{region[3]}{crng.choice(vocab.STREET_STEMS)}{crng.choice(vocab.STREET_KINDS)}{crng.randint(1, 300)}号{crng.choice(vocab.TOWERS)}"
    return Company(
        name=ins.name, short=ins.short, hotline=hotline, address=address,
        postcode=f"{region[0][:2]}{crng.randint(0, 9999):04d}", website=f"www.{ins.domain}.com.cn", kind=ins.kind,
    )


def make_product(rng: random.Random, company: Company) -> str:
    name = rng.choice(vocab.PRODUCT_BRANDS) + rng.choice(vocab.PRODUCT_TYPES[company.kind])
    if chance(rng, 0.3):
        name = company.short + name
    if chance(rng, 0.3) and not name.endswith("）"):
        name += rng.choice(vocab.PRODUCT_EDITIONS)
    return name


def _money(rng: random.Random) -> tuple[int, int]:
    r = rng.random()
    if r < 0.6:
        sum_yuan = rng.choice(ROUND_SUMS_YUAN)
    elif r < 0.9:
        sum_yuan = rng.randint(1, 300) * 10_000
    else:
        sum_yuan = rng.randint(10, 2000) * 1_000
    sum_cents = sum_yuan * 100
    if chance(rng, 0.05):
        sum_cents += rng.randint(1, 9999)
    premium_yuan = max(50, min(sum_yuan // 10, int(sum_yuan * rng.uniform(0.0008, 0.04))))
    kind = rng.random()
    if kind < 0.4:
        premium_cents = premium_yuan * 100
    elif kind < 0.7:
        premium_cents = premium_yuan * 100 + rng.randint(1, 9) * 10
    else:
        premium_cents = premium_yuan * 100 + rng.randint(1, 99)
    return sum_cents, premium_cents


def _term(rng: random.Random, effective: dt.date, insured: Person) -> tuple[dt.date, str]:
    r = rng.random()
    if r < 0.45:
        if chance(rng, 0.5):
            return add_years(effective, 1) - dt.timedelta(days=1), "1年"
        return add_years(effective, 1), "1年"
    if r < 0.75:
        years = rng.choice((5, 10, 15, 20, 30))
        return add_years(effective, years), f"{years}年"
    age_now = effective.year - insured.birth.year
    target = rng.choice(tuple(a for a in (60, 70, 80, 88, 100) if a > age_now + 1) or (age_now + 30,))
    return add_years(insured.birth, target), f"至{target}周岁"


def make_facts(rng: random.Random) -> PolicyFacts:
    company = make_company(rng)
    effective = random_date(rng, dt.date(2018, 1, 1), dt.date(2027, 12, 31))
    issue = effective - dt.timedelta(days=rng.choice((0, 0, 1, 2, 3, 5, 7, 10, 15, 20, 30)))
    ph_male = chance(rng, 0.5)
    ph_birth = random_date(rng, add_years(effective, -65), add_years(effective, -20))
    policyholder = make_person(rng, ph_birth, ph_male)
    relation = rng.choices(vocab.RELATIONS, weights=(0.35, 0.25, 0.3, 0.1))[0]
    if relation == "本人":
        insured = policyholder
    elif relation == "配偶":
        birth = random_date(rng, add_years(ph_birth, -6), add_years(ph_birth, 6))
        insured = make_person(rng, min(birth, add_years(effective, -18)), not ph_male)
    elif relation == "子女":
        low = max(add_years(ph_birth, 20), add_years(effective, -17))
        high = max(low, effective - dt.timedelta(days=30))
        male = chance(rng, 0.5)
        surname = policyholder.name[:2] if policyholder.name[:2] in vocab.COMPOUND_SURNAMES else policyholder.name[0]
        insured = make_person(rng, random_date(rng, low, high), male, surname if (ph_male or chance(rng, 0.3)) else None)
    else:
        insured = make_person(rng, random_date(rng, add_years(ph_birth, -35), add_years(ph_birth, -22)), chance(rng, 0.5))
    if chance(rng, 0.55):
        beneficiary: str | None = "法定"
    elif relation != "本人" and chance(rng, 0.4):
        beneficiary = policyholder.name
    else:
        beneficiary = make_name(rng, chance(rng, 0.5))
    expiry, term_text = _term(rng, effective, insured)
    sum_cents, premium_cents = _money(rng)
    absent: frozenset[str] = frozenset()
    if chance(rng, 0.2):
        absent = frozenset(rng.sample(OPTIONAL_FIELDS, rng.choice((1, 1, 2))))
    payment_mode = rng.choice(vocab.PAYMENT_MODES)
    payment_years = "趸交" if payment_mode == "趸交" else f"{rng.choice((1, 3, 5, 10, 15, 20, 30))}年"
    agent_code = (
        f"{rng.randint(10**9, 10**10 - 1)}" if chance(rng, 0.5)
        else f"{rng.choice('ABDGHJKLMNPQRSTWXYZ')}{rng.randint(10**7, 10**8 - 1)}"
    )
    branch_region = rng.choice(vocab.REGIONS)
    branch_city = branch_region[2] or branch_region[1]
    return PolicyFacts(
        company=company, product=make_product(rng, company), policyholder=policyholder, insured=insured,
        relation=relation, beneficiary=beneficiary, sum_cents=sum_cents, premium_cents=premium_cents,
        effective=effective, expiry=expiry, issue=issue, term_text=term_text, payment_mode=payment_mode,
        payment_years=payment_years, agent_name=make_name(rng, chance(rng, 0.5)), agent_code=agent_code,
        branch=f"{branch_city.removesuffix('市')}分公司", absent=absent,
    )

"""The word lists behind ``addresses``: street suffixes, US state codes, and the words
that never name a street."""

from __future__ import annotations

US_SUFFIX_WORDS = (
    "street|st|avenue|ave|av|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|"
    "terrace|ter|circle|cir|parkway|pkwy|highway|hwy|square|sq|trail|trl|crescent|cres|"
    "close|grove|gardens|gdns|mews|row|walk|alley|aly|loop|pike|plaza|plz|expressway|"
    "expy|freeway|fwy|route|rte|broadway|causeway|crossing|xing|hollow|point|pt|ridge|"
    "run|path|green|park|hill|vale|view|rise|wharf|quay|esplanade|embankment"
).split("|")
STATES = (
    r"AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|"
    r"NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|PR|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|"
    r"AS|FM|GU|MH|MP|PW|VI|AA|AE|AP"
)
SKIP_WORDS = frozenset(
    """
the a an at in on to of for from with by and or is are was were my your our their his
her its this that these those items item units unit pcs days day hours minutes years
weeks months times people users seats licenses copies orders tickets per each every
more than about only over under up down off out into next last first second min mins
sec secs hrs hr minute hour week month year ago times x code product sku model
""".split()
)

"""The regex test set shared by the regex, matcher and benchmark tests."""

REGEXES = {
    "email": r"[a-zA-Z0-9._%+-]{1,30}@[a-zA-Z0-9.-]{1,20}\.[a-zA-Z]{2,6}",
    "iso_date": r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
    "float": r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?",
    "phone": r"\(\d{3}\) \d{3}-\d{4}",
    "ipv4": r"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)",
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "sentence": r"[A-Z][a-z]*( [a-z]+){0,19}\.",
    "unicode": r"(café|日本語|naïve)+",
    "negated": r"[^a-z\n]{1,10}",
    "any": r".{0,12}",
    "json_like": r'\{"name":"[^"\\\x00-\x1f]{1,20}","age":(0|[1-9]\d{0,2})\}',
    "choice": r"(yes|no|maybe)",
}

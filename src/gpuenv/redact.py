"""Redaction of what identifies a machine or a person in a facts or report document (pure).

``Redactor.for_facts(facts_doc)`` learns the identifiers of one machine (its hostname, the
probed user, GPU UUIDs, kernel command line secrets, addresses) and ``apply`` replaces them, and
whatever else it recognises on the way (``/home/NAME`` paths, UUIDs, MAC addresses, machine
ids, credentials in URLs), in every string of any JSON-like value, with stable placeholders:
the same input gets the same placeholder (``<host-1>``, ``<user-1>``, ``<uuid-1>``) across all
the documents one Redactor sees, so a report and its facts still agree with each other.
"""

from __future__ import annotations

import re
from typing import Any

# Names too common to be identifying, and too common to replace inside free text ("ubuntu" is an
# os-release ID too): replaced only where they stand as the user field or a /home directory.
GENERIC_NAMES = frozenset({
    "root", "ubuntu", "debian", "admin", "user", "ec2-user", "centos", "fedora", "cloud-user", "opc",
    "azureuser", "localhost", "localhost.localdomain", "nobody", "rocky", "almalinux", "alma", "arch",
})  # fmt: skip
KINDS = {
    "host": "hostname",
    "user": "user names",
    "home": "home paths",
    "uuid": "UUIDs",
    "secret": "kernel command line secrets",
    "ip": "IP addresses",
    "mac": "MAC addresses",
    "id": "machine ids",
    "cred": "URL credentials",
}
_UUID = re.compile(
    r"(?<![0-9A-Za-z])(?:(?:GPU|MIG)-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![0-9A-Za-z])"
)
_MACHINE_ID = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")
_MAC = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![0-9A-Fa-f:-])")
_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])")
_HOME = re.compile(r"/home/([^/\s:;,'\"<>=]+)")
_URL_CRED = re.compile(r"(?<=://)([^/@\s:]+(?::[^/@\s]*)?)@")
_SECRET_KEY = re.compile(
    r"(?:^|[._-])(?:pass|passwd|password|pwd|token|secret|key|apikey|auth|cred|creds|credentials)$", re.I
)
_DEVICE_ID_VALUE = re.compile(r"^(?:PART)?UUID=(.+)$|^(?:PART)?LABEL=(.+)$", re.I)


# The fields whose values are exact identifiers, by the last two steps of their path.
_FIELDS: dict[tuple[object, ...], str] = {("host", "hostname"): "host", ("user", "name"): "user", ("groups", "[]"): "user"}


class Redactor:
    def __init__(self) -> None:
        self.mapping: dict[tuple[str, str], str] = {}  # (kind, value) -> placeholder
        self.counts: dict[str, int] = {}
        self.free_text: dict[str, str] = {}  # literal -> placeholder, replaced inside any string
        self._pattern: re.Pattern[str] | None = None
        self.exact: dict[tuple[str, str], str] = {}  # (host|user, whole value of the field) -> placeholder
        self.used: set[str] = set()
        self.cmdline_values: dict[str, str] = {}  # kernel command line value -> placeholder
        self.cmdline_hosts: dict[str, str] = {}  # the hostname field of ip=

    # -- learning ------------------------------------------------------------------------------
    def placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self.mapping:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.mapping[key] = f"<{kind}-{self.counts[kind]}>"
        self.used.add(kind)
        return self.mapping[key]

    def _literal(self, kind: str, value: str) -> None:
        if value and value not in self.free_text:
            self.free_text[value] = self.placeholder(kind, value)
            self._pattern = None

    @classmethod
    def for_facts(cls, facts: object) -> Redactor:
        r = cls()
        if not isinstance(facts, dict):
            return r
        host = facts.get("host") or {}
        hostname = host.get("hostname") if isinstance(host, dict) else None
        if isinstance(hostname, str) and hostname:
            r.exact[("host", hostname)] = r.placeholder("host", hostname)
            if hostname.lower() not in GENERIC_NAMES and len(hostname) >= 3:
                r._literal("host", hostname)
                short = hostname.split(".")[0]
                if short != hostname and short.lower() not in GENERIC_NAMES and len(short) >= 3:
                    r._literal("host", short)
        user = facts.get("user") or {}
        name = user.get("name") if isinstance(user, dict) else None
        if isinstance(name, str) and name and name != "root":
            r.exact[("user", name)] = r.placeholder("user", name)
            if name.lower() not in GENERIC_NAMES and len(name) >= 3:
                r._literal("user", name)
        for gpu in facts.get("gpus") or ():
            uuid = gpu.get("uuid") if isinstance(gpu, dict) else None
            if isinstance(uuid, str) and uuid:
                r._literal("uuid", uuid)
        kernel = facts.get("kernel") or {}
        cmdline = kernel.get("cmdline") if isinstance(kernel, dict) else None
        if isinstance(cmdline, str):
            r._learn_cmdline(cmdline)
        return r

    def _learn_cmdline(self, cmdline: str) -> None:
        for token in cmdline.split():
            key, eq, value = token.partition("=")
            if not eq or not value:
                continue
            device = _DEVICE_ID_VALUE.match(value)
            if device:  # root=UUID=..., resume=PARTUUID=..., root=LABEL=...
                self._secret_value("uuid", device.group(1) or device.group(2))
            elif _SECRET_KEY.search(key):
                self._secret_value("secret", value)
            elif key.lower() == "hostname":
                self._secret_value("host", value)
            elif key.lower() == "ip" and value.count(":") >= 4 and value.split(":")[4]:
                # ip=<client>:<server>:<gw>:<netmask>:<hostname>:<device>:<autoconf> (kernel nfsroot.rst)
                name = value.split(":")[4]
                self.placeholder("host", name)
                self.cmdline_hosts[name] = self.mapping[("host", name)]
        for ip in _IPV4.findall(cmdline):
            self._literal("ip", ip)
        for mac in _MAC.findall(cmdline):
            self._literal("mac", mac)

    def _secret_value(self, kind: str, value: str) -> None:
        """A value of the command line: replaced there always, and in other strings when it is
        long enough not to be a common word or number."""
        self.cmdline_values[value] = self.placeholder(kind, value)
        if len(value) >= 6:
            self._literal(kind, value)

    def cmdline(self, text: str) -> str:
        out = []
        for token in text.split(" "):
            key, eq, value = token.partition("=")
            device = _DEVICE_ID_VALUE.match(value) if eq else None
            if device:
                raw = device.group(1) or device.group(2)
                if raw in self.cmdline_values:
                    token = f"{key}={value[: len(value) - len(raw)]}{self.cmdline_values[raw]}"
            elif eq and value in self.cmdline_values:
                token = f"{key}={self.cmdline_values[value]}"
            elif eq and key == "ip" and value.count(":") >= 4 and value.split(":")[4] in self.cmdline_hosts:
                fields = value.split(":")
                fields[4] = self.cmdline_hosts[fields[4]]
                token = "ip=" + ":".join(fields)
            out.append(token)
        return self.text(" ".join(out))

    # -- applying ------------------------------------------------------------------------------
    def _compiled(self) -> re.Pattern[str] | None:
        if self._pattern is None and self.free_text:
            alternatives = sorted(self.free_text, key=len, reverse=True)
            self._pattern = re.compile(
                r"(?<![0-9A-Za-z])(?:" + "|".join(re.escape(a) for a in alternatives) + r")(?![0-9A-Za-z])"
            )
        return self._pattern

    def text(self, s: str) -> str:
        s = _HOME.sub(lambda m: "/home/" + self._home(m.group(1)), s)
        s = _URL_CRED.sub(lambda m: self.placeholder("cred", m.group(1)) + "@", s)
        pattern = self._compiled()
        if pattern is not None:
            s = pattern.sub(lambda m: self.free_text[m.group(0)], s)
        s = _UUID.sub(lambda m: self.placeholder("uuid", m.group(0)), s)
        s = _MAC.sub(lambda m: self.placeholder("mac", m.group(0)), s)
        s = _MACHINE_ID.sub(lambda m: self.placeholder("id", m.group(0)), s)
        return s

    def _home(self, name: str) -> str:
        if name.startswith("<") and name.endswith(">"):
            return name
        self.used.add("home")
        return self.placeholder("user", name)

    def apply(self, value: Any, _path: tuple[object, ...] = ()) -> Any:
        """A copy of ``value`` with every string redacted (dict keys too)."""
        if isinstance(value, str):
            field = _FIELDS.get(_path[-2:])
            if field and (field, value) in self.exact:
                return self.exact[(field, value)]
            if _path[-2:] == ("kernel", "cmdline"):
                return self.cmdline(value)
            return self.text(value)
        if isinstance(value, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.apply(v, (*_path, k))
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.apply(v, (*_path, "[]")) for v in value]
        return value

    def summary(self) -> str:
        """'hostname, user names, home paths' — what was replaced, for the one-line notice."""
        kinds = [label for kind, label in KINDS.items() if kind in self.used]
        return ", ".join(kinds) if kinds else "nothing identifying was found"

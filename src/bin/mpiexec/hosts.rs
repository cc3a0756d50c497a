//! Where ranks run: the hosts of `-hosts`/`-f` with their slots, how ranks
//! are placed on them, and the command that starts a rank on another host
//! through the launcher (`ssh` unless `--launcher` says otherwise).

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    pub name: String,
    pub slots: usize,
}

/// `h1,h2:4,h3` (as `-hosts` takes it).
pub fn parse_list(list: &str) -> Result<Vec<Host>, String> {
    list.split(',').filter(|s| !s.trim().is_empty()).map(|s| parse_host(s.trim())).collect()
}

/// A hostfile: one host per line, `host`, `host:slots` or `host slots=N`;
/// `#` starts a comment.
pub fn parse_file(text: &str) -> Result<Vec<Host>, String> {
    let mut hosts = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let mut h = parse_host(words.next().expect("a non-empty line has a word"))?;
        for w in words {
            match w.strip_prefix("slots=").map(str::parse) {
                Some(Ok(n)) if n > 0 => h.slots = n,
                _ => return Err(format!("hostfile line `{line}`: `{w}` is not slots=N")),
            }
        }
        hosts.push(h);
    }
    if hosts.is_empty() {
        return Err("the hostfile names no host".into());
    }
    Ok(hosts)
}

fn parse_host(s: &str) -> Result<Host, String> {
    match s.rsplit_once(':') {
        Some((name, n)) => match n.parse() {
            Ok(slots) if slots > 0 && !name.is_empty() => Ok(Host { name: name.to_string(), slots }),
            _ => Err(format!("`{s}` is not host or host:slots")),
        },
        None => Ok(Host { name: s.to_string(), slots: 1 }),
    }
}

/// The host of each of `n` ranks: blocks of consecutive ranks, each host
/// taking its slots (or `ppn`) in turn, round and round until all are
/// placed (more ranks than slots oversubscribe, as with Hydra).
pub fn place(hosts: &[Host], n: usize, ppn: Option<usize>) -> Vec<String> {
    let mut out = Vec::with_capacity(n);
    'fill: loop {
        for h in hosts {
            for _ in 0..ppn.unwrap_or(h.slots) {
                if out.len() == n {
                    break 'fill;
                }
                out.push(h.name.clone());
            }
        }
    }
    out
}

/// Whether `host` names the machine mpiexec runs on (ranks there are
/// started directly).
pub fn is_local(host: &str, me: &str) -> bool {
    host == "localhost" || host == "127.0.0.1" || host == me || me.split('.').next() == Some(host)
}

/// Quote `s` for a POSIX shell.
pub fn quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Variables of mpiexec's environment not passed to ranks on other hosts:
/// they describe this host or this session.
const LOCAL_ONLY: [&str; 12] = [
    "HOSTNAME",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    "SSH_AUTH_SOCK",
    "DISPLAY",
    "XAUTHORITY",
    "TERM",
];

/// The shell command a launcher runs on another host to start a rank:
/// into mpiexec's directory (if it exists there), then the program with
/// mpiexec's environment, `extra` on top.
pub fn remote_command(program: &[String], extra: &BTreeMap<String, String>) -> String {
    let mut env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| !LOCAL_ONLY.contains(&k.as_str()))
        .filter(|(k, _)| {
            k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && !k.starts_with(|c: char| c.is_ascii_digit())
        })
        .collect();
    env.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".into());
    let mut cmd = format!("cd {} 2>/dev/null; exec env", quote(&cwd));
    for (k, v) in &env {
        cmd.push(' ');
        cmd.push_str(&quote(&format!("{k}={v}")));
    }
    for a in program {
        cmd.push(' ');
        cmd.push_str(&quote(a));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_placement() {
        let h = parse_list("a,b:2").unwrap();
        assert_eq!(place(&h, 5, None), ["a", "b", "b", "a", "b"]);
        assert_eq!(place(&h, 4, Some(2)), ["a", "a", "b", "b"]);
        let f = parse_file("# cluster\na:2\nb slots=3  # big one\n\n").unwrap();
        assert_eq!(f, [Host { name: "a".into(), slots: 2 }, Host { name: "b".into(), slots: 3 }]);
        assert!(parse_file("a slots=x").is_err());
        assert!(parse_list("a:0").is_err());
    }

    #[test]
    fn commands_survive_the_remote_shell() {
        assert_eq!(quote("plain/path-1.x"), "plain/path-1.x");
        assert_eq!(quote("it's here"), r"'it'\''s here'");
        let extra = BTreeMap::from([("PMI_ID".to_string(), "it's 3".to_string())]);
        let prog: Vec<String> = ["sh", "-c", "echo \"$PMI_ID|$1\"", "x", "a b"].map(String::from).into();
        let out = std::process::Command::new("sh").arg("-c").arg(remote_command(&prog, &extra)).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "it's 3|a b\n");
    }
}

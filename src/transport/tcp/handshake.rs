//! Making connections: opening one with a hello (magic, the job's key,
//! our rank), accepting one and checking its hello, welcoming it, and
//! which of two connections opened at once wins.

use super::*;
use std::io::Write;

impl Tcp {
    /// Open a connection to `dst`; frames wait in it for the welcome.
    pub(super) fn connect(&mut self, dst: usize) -> Result<(), String> {
        let addr = self.peers[dst].ok_or_else(|| format!("rank {dst} is not reached over TCP"))?;
        let fail = |e: std::io::Error| format!("cannot connect to rank {dst} at {addr}: {e}");
        let mut s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(fail)?;
        s.set_nodelay(true).map_err(fail)?;
        let mut hello = Vec::with_capacity(HELLO_BYTES);
        hello.extend_from_slice(MAGIC);
        hello.extend_from_slice(&self.key);
        hello.extend_from_slice(&(self.me as u32).to_le_bytes());
        s.write_all(&hello).map_err(fail)?;
        s.set_nonblocking(true).map_err(fail)?;
        let i = self.insert(Conn::new(s, Some(dst)));
        self.link[dst] = Some(i);
        Ok(())
    }

    fn insert(&mut self, c: Conn) -> usize {
        let fd = c.stream.as_raw_fd();
        let i = match self.conns.iter().position(Option::is_none) {
            Some(i) => {
                self.conns[i] = Some(c);
                i
            }
            None => {
                self.conns.push(Some(c));
                self.conns.len() - 1
            }
        };
        // A connection epoll does not watch is read at every poll instead.
        self.conns[i].as_mut().expect("inserted").watched = watch(&self.epoll, fd, i as u64).is_ok();
        i
    }

    pub(super) fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((s, _)) => {
                    if s.set_nonblocking(true).is_err() || s.set_nodelay(true).is_err() {
                        continue;
                    }
                    let pending: Vec<usize> = (0..self.conns.len())
                        .filter(|&i| self.conns[i].as_ref().is_some_and(|c| c.link == Link::Hello))
                        .collect();
                    if pending.len() >= MAX_PENDING {
                        self.conns[pending[0]] = None;
                        self.refused += 1;
                    }
                    self.insert(Conn::new(s, None));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// A connection we accepted: admit it once its hello proves the key,
    /// close it as soon as it cannot.
    pub(super) fn check_hello(&mut self, i: usize, broken: bool) {
        let c = self.conns[i].as_mut().expect("checked by the caller");
        let have = &c.inbuf[c.start..c.end];
        let magic_ok = have.len() < MAGIC.len() || have[..MAGIC.len()] == MAGIC[..];
        if have.len() < HELLO_BYTES && magic_ok && !broken && !c.eof {
            return;
        }
        let rank = have
            .get(MAGIC.len() + KEY_BYTES..HELLO_BYTES)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        let key_ok = have.get(MAGIC.len()..MAGIC.len() + KEY_BYTES) == Some(&self.key[..]);
        match rank {
            Some(r) if magic_ok && key_ok && r < self.peers.len() && self.peers[r].is_some() => {
                c.consume(HELLO_BYTES);
                self.admit(i, r);
            }
            _ => {
                self.conns[i] = None;
                self.refused += 1;
                if crate::runtime::tunables::flag("OXMPI_DEBUG") {
                    crate::runtime::report(&format!(
                        "oxmpi: rank {}: closed a TCP connection that did not prove the job's key\n",
                        self.me
                    ));
                }
            }
        }
    }

    /// Rank `r` proved itself on accepted connection `i`: make it our
    /// link with `r`, unless ours (opened by the lower rank, us) wins.
    fn admit(&mut self, i: usize, r: usize) {
        let ours = self.link[r].and_then(|j| self.conns[j].as_ref().map(|c| (j, c.link)));
        let mut out = Queue::default();
        out.push(WELCOME);
        match ours {
            None => {}
            Some((j, Link::Welcome)) if r < self.me => {
                // theirs wins: our queued frames (none went out) move to it
                let mine = self.conns[j].take().expect("linked");
                out.append(mine.out);
            }
            Some(_) => {
                // ours wins (or is already open): theirs goes
                self.conns[i] = None;
                return;
            }
        }
        if let Some(held) = self.held[r].take() {
            out.append(held);
        }
        let c = self.conns[i].as_mut().expect("being admitted");
        (c.peer, c.link, c.out) = (Some(r), Link::Open, out);
        self.link[r] = Some(i);
    }

    /// A connection we opened to `p`: open once the welcome came; if `p`
    /// closed it instead (its own connection won), keep the frames until
    /// that one arrives.
    pub(super) fn check_welcome(&mut self, i: usize, p: usize, broken: bool) {
        let c = self.conns[i].as_mut().expect("checked by the caller");
        let have = &c.inbuf[c.start..c.end];
        if have.len() >= WELCOME.len() && have[..WELCOME.len()] == WELCOME[..] {
            c.consume(WELCOME.len());
            c.link = Link::Open;
            return;
        }
        if broken || c.eof || have.len() >= WELCOME.len() {
            let c = self.conns[i].take().expect("checked by the caller");
            self.held[p] = Some(c.out);
            self.link[p] = None;
        }
    }
}

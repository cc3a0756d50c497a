//! The PMI-1 wire protocol, server side: one thread per rank answers its
//! commands on the socket the rank inherited as PMI_FD, or (ranks on other
//! hosts) on the TCP connection it opened to PMI_PORT, naming itself by
//! PMI_ID first.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};

use crate::Event;
use mpi::runtime::pmi::{decode, parse};

pub struct Store {
    kvs: HashMap<String, String>,
    waiting: usize,
    generation: u64,
    pub initialized: Vec<bool>,
    pub finalized: Vec<bool>,
    /// Ranks that connected over TCP (each may, once).
    connected: Vec<bool>,
}

pub struct Server {
    pub size: usize,
    pub kvsname: String,
    pub store: Mutex<Store>,
    barrier: Condvar,
}

impl Server {
    pub fn new(size: usize, kvsname: String) -> Arc<Server> {
        Arc::new(Server {
            size,
            kvsname,
            store: Mutex::new(Store {
                kvs: HashMap::new(),
                waiting: 0,
                generation: 0,
                initialized: vec![false; size],
                finalized: vec![false; size],
                connected: vec![false; size],
            }),
            barrier: Condvar::new(),
        })
    }

    /// Answer the ranks in `remote` that connect to `listener`: each
    /// names itself (`cmd=initack pmiid=N`), learns its rank and the job
    /// size, then is served like a local rank. Anything else is closed.
    pub fn serve_tcp(self: Arc<Self>, listener: TcpListener, remote: Vec<bool>, events: Sender<Event>) {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (srv, remote, events) = (self.clone(), remote.clone(), events.clone());
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let Ok(mut out) = stream.try_clone() else { return };
                let mut reader = BufReader::new(stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                let f = parse(&first);
                let id = f.get("pmiid").and_then(|v| v.parse::<usize>().ok());
                let Some(rank) =
                    id.filter(|&r| f.get("cmd").map(String::as_str) == Some("initack") && remote.get(r) == Some(&true))
                else {
                    return;
                };
                if std::mem::replace(&mut srv.store.lock().unwrap().connected[rank], true) {
                    return;
                }
                let hello = format!("cmd=initack\ncmd=set size={}\ncmd=set rank={rank}\ncmd=set debug=0\n", srv.size);
                if out.write_all(hello.as_bytes()).is_ok() {
                    srv.serve(rank, reader, out, events);
                }
            });
        }
    }

    /// Serve rank `rank` until it closes its end.
    pub fn serve(self: Arc<Self>, rank: usize, input: impl BufRead, mut out: impl Write, events: Sender<Event>) {
        for line in input.lines() {
            let Ok(line) = line else { break };
            let f = parse(&line);
            let reply = match f.get("cmd").map(String::as_str) {
                Some("init") => {
                    self.store.lock().unwrap().initialized[rank] = true;
                    // escapes=percent: values may carry percent-encoded
                    // spaces (`pmi::encode`), which this launcher decodes
                    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0 escapes=percent\n".to_string()
                }
                Some("get_maxes") => "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024\n".into(),
                Some("get_appnum") => "cmd=appnum rc=0 appnum=0\n".into(),
                Some("get_my_kvsname") => format!("cmd=my_kvsname rc=0 kvsname={}\n", self.kvsname),
                Some("get_universe_size") => format!("cmd=universe_size rc=0 size={}\n", self.size),
                Some("put") => {
                    let (k, v) =
                        (f.get("key").cloned().unwrap_or_default(), f.get("value").cloned().unwrap_or_default());
                    self.store.lock().unwrap().kvs.insert(k, v);
                    "cmd=put_result rc=0\n".into()
                }
                Some("get") => {
                    let key = f.get("key").cloned().unwrap_or_default();
                    match self.store.lock().unwrap().kvs.get(&key) {
                        Some(v) => format!("cmd=get_result rc=0 value={v}\n"),
                        None => "cmd=get_result rc=-1 msg=key_not_found\n".into(),
                    }
                }
                Some("barrier_in") => {
                    self.barrier_in();
                    "cmd=barrier_out\n".into()
                }
                Some("finalize") => {
                    self.store.lock().unwrap().finalized[rank] = true;
                    "cmd=finalize_ack\n".into()
                }
                Some("abort") => {
                    let code = f.get("exitcode").and_then(|c| c.parse().ok()).unwrap_or(1);
                    let msg = f.get("message").map(|m| decode(m)).unwrap_or_default();
                    let _ = events.send(Event::Abort { rank, code, msg });
                    continue;
                }
                _ => format!(
                    "cmd=error rc=-1 msg=unknown_command_{}\n",
                    f.get("cmd").map(String::as_str).unwrap_or("none")
                ),
            };
            if out.write_all(reply.as_bytes()).is_err() {
                break;
            }
        }
    }

    fn barrier_in(&self) {
        let mut s = self.store.lock().unwrap();
        let generation = s.generation;
        s.waiting += 1;
        if s.waiting == self.size {
            s.waiting = 0;
            s.generation += 1;
            self.barrier.notify_all();
            return;
        }
        while s.generation == generation {
            s = self.barrier.wait(s).unwrap();
        }
    }
}

//! The PMI-1 wire protocol, server side: one thread per rank answers its
//! commands on the socket the rank inherited as PMI_FD.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
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
            }),
            barrier: Condvar::new(),
        })
    }

    /// Serve rank `rank` until it closes its end.
    pub fn serve(self: Arc<Self>, rank: usize, stream: UnixStream, events: Sender<Event>) {
        let mut out = match stream.try_clone() {
            Ok(s) => s,
            Err(_) => return,
        };
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let f = parse(&line);
            let reply = match f.get("cmd").map(String::as_str) {
                Some("init") => {
                    self.store.lock().unwrap().initialized[rank] = true;
                    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n".to_string()
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

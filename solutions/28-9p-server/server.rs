// SPDX-License-Identifier: GPL-2.0

//! One connection: read a request, answer it, repeat.
//!
//! Each connection is one task on the executor. It reads whole frames from
//! its socket (awaiting the reactor when nothing has arrived), hands each to
//! the core session (`session.rs`: the protocol's rules, over the kernel's
//! `Vfs`, `kvfs.rs`), and writes the reply. Requests are answered one at a
//! time, in order: so by the time a `Tflush` arrives, the request it names
//! was answered already, and `Rflush` is all there is to say.
//!
//! What the connection can walk and list is the [`Namespace`] it is served
//! with; what a client may cost is its [`Policy`] (`policy.rs`).

use crate::{
    async_socket::AsyncStream,
    executor::yield_now,
    kvfs::{attr_of, errno_of, Bytes, Kernel},
    p9::frame::HEADER_SIZE,
    policy::Policy,
    session::{
        frame_size,
        Begun,
        Limits,
        ReadTarget,
        Session,
        FIRST_MSIZE, //
    },
    vfs::File, //
};
use kernel::{
    prelude::*,
    sync::Arc,
    time::{
        Instant,
        Monotonic, //
    }, //
};

/// What a connection reaches under the export root (`session::Reach`):
/// the crate root names it (`service::Server<N, P>`).
pub(crate) use crate::session::Reach as Namespace;

/// Requests a connection answers before it lets other tasks have a turn.
const TURNS: u32 = 16;

// ANCHOR: serve
/// One connection's task, served with the namespace `N` and the policy `P`.
/// Dropping the stream at the end closes it; dropping `place` gives the
/// connection's place back (`Policy::admit`).
pub(crate) async fn serve<N: Namespace, P: Policy>(
    stream: AsyncStream,
    root: File,
    policy: Arc<P>,
    place: impl Send,
) {
    let result = serve_requests::<N, P>(&stream, root, policy.clone()).await;
    policy.ended(result);
    drop(place);
}
// ANCHOR_END: serve

// ANCHOR: serve_requests
/// Reads frames from `stream` and answers each, until the client closes the
/// connection or sends a frame that cannot be answered (its size field is
/// wrong: the stream cannot be resynchronised). What waits for the client
/// mid-frame goes through `policy.within`.
async fn serve_requests<N: Namespace, P: Policy>(
    stream: &AsyncStream,
    root: File,
    policy: Arc<P>,
) -> Result {
    let mut conn = Connection::<N, P>::new(&root, policy)?;
    let mut inbuf = KVVec::from_elem(0u8, FIRST_MSIZE as usize, GFP_KERNEL)?;
    // Bytes received and not answered yet, from the start of `inbuf`.
    let mut filled = 0usize;
    loop {
        // A whole frame in the buffer: answer it.
        if let Some(size) = frame_size(inbuf.get(..filled).ok_or(EINVAL)?) {
            if size < HEADER_SIZE || size > conn.session.msize() as usize {
                // Answer with the tag if there is one, then give up.
                let len = conn.session.refuse(inbuf.get(..filled).ok_or(EINVAL)?);
                conn.send(stream, len).await?;
                return Err(EPROTO);
            }
            if filled >= size {
                let len = conn.handle(inbuf.get(..size).ok_or(EINVAL)?).await;
                conn.send(stream, len).await?;
                // Keep what follows the frame: the next ones.
                inbuf.copy_within(size..filled, 0);
                filled -= size;
                // A `Tversion` may have raised msize: grow the buffer.
                let msize = conn.session.msize() as usize;
                if inbuf.len() < msize {
                    inbuf.resize(msize, 0, GFP_KERNEL)?;
                }
                // Let the other connections have a turn now and then.
                conn.take_turn().await;
                continue;
            }
        }
        let n = conn
            .receive(stream, inbuf.get_mut(filled..).ok_or(EINVAL)?, filled > 0)
            .await?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
    }
}
// ANCHOR_END: serve_requests

// ANCHOR: session
/// One connection: its core session, and what the framing keeps besides.
struct Connection<N: Namespace, P: Policy> {
    /// The requests' rules and state: fids, walked names, `msize`.
    session: Session<Kernel<P>, N>,
    /// The module's policy.
    policy: Arc<P>,
    /// When the client was first waited for, for the rest of the frame it
    /// is sending; `None` between frames.
    frame_began: Option<Instant<Monotonic>>,
    /// When the connection began, or last answered a request while it held
    /// a fid: a connection without one waits from here for its next frame.
    idle_since: Instant<Monotonic>,
    /// Requests answered since the task last let the others have a turn.
    turns: u32,
}
// ANCHOR_END: session

impl<N: Namespace, P: Policy> Connection<N, P> {
    /// A connection before `Tversion`, serving the export `root` within
    /// the policy's limits.
    fn new(root: &File, policy: Arc<P>) -> Result<Self> {
        let limits = Limits {
            max_msize: policy.max_msize(),
            max_fids: policy.max_fids(),
            max_names: policy.max_names(),
            // The policy finds the users, and squashes root itself.
            allow_root: true,
            cross_mounts: N::cross_mounts(),
        };
        let attr = attr_of(root)?;
        let vfs = Kernel::new(root.clone(), policy.clone());
        let session = Session::new(vfs, root.clone(), attr, limits, Bytes::new(), Bytes::new())
            .map_err(|e| Error::from_errno(-(e as i32)))?;
        Ok(Self {
            session,
            policy,
            frame_began: None,
            idle_since: Instant::now(),
            turns: 0,
        })
    }

    // ANCHOR: io
    /// Sends the reply `handle` or `refuse` encoded (its first `len` bytes).
    async fn send(&self, stream: &AsyncStream, len: usize) -> Result {
        let reply = self.session.reply(len);
        self.policy
            .within(Instant::now(), stream.write_all(reply))
            .await?
    }

    // ANCHOR: receive
    /// Reads what has arrived into `buf`, waiting for it if nothing has:
    /// the number of bytes, 0 once the client closed the connection.
    /// `mid_frame` says the client began a frame it has not finished, and
    /// owes the rest (which the policy may not wait for long). Between
    /// frames, a client that holds a fid is a mount nobody uses, and may
    /// be idle for hours; one that holds none is not a mount (yet), and
    /// has the policy's time in all from `idle_since`, however many frames
    /// it sends meanwhile: a place among `max_conns` is not kept for
    /// connections that never attach.
    async fn receive(
        &mut self,
        stream: &AsyncStream,
        buf: &mut [u8],
        mid_frame: bool,
    ) -> Result<usize> {
        if !mid_frame {
            if self.session.fid_count() == 0 {
                return self
                    .policy
                    .within(self.idle_since, stream.read(buf))
                    .await?;
            }
            return stream.read(buf).await;
        }
        // The clock starts at the first wait and runs until `handle` takes
        // the whole frame: the client has its time for the frame, not for
        // each piece (a byte now and then must not hold a connection).
        let began = *self.frame_began.get_or_insert_with(Instant::now);
        self.policy.within(began, stream.read(buf)).await?
    }
    // ANCHOR_END: receive
    // ANCHOR_END: io

    /// Counts one request answered; every `TURNS` of them, lets the other
    /// tasks have the worker. A client that pipelines its requests never
    /// makes a read wait, and would otherwise keep the worker to itself.
    async fn take_turn(&mut self) {
        self.turns += 1;
        if self.turns == TURNS {
            self.turns = 0;
            yield_now().await;
        }
    }

    // ANCHOR: handle
    /// Answers the whole frame `frame`; the length of the reply. The core
    /// session answers it, except the read of a `Tread`, which is the
    /// policy's: stage 28's reads in the worker, stage 35's awaits a
    /// reactor. The read runs with no user's credentials installed (a task
    /// cannot hold them across an `.await`): the file was opened with
    /// them, and a read checks nothing more.
    async fn handle(&mut self, frame: &[u8]) -> usize {
        self.frame_began = None;
        if self.session.fid_count() != 0 {
            self.idle_since = Instant::now();
        }
        match self.session.begin(frame) {
            Begun::Answered(len) => len,
            Begun::Read(ReadTarget {
                tag,
                file,
                offset,
                buf,
                ..
            }) => {
                let result = self.policy.read(file, buf, offset).await;
                self.session.finish_read(tag, result.map_err(errno_of))
            }
        }
    }
    // ANCHOR_END: handle
}

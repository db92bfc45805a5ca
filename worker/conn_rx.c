/*
 * The receive side of a large WRITE without the copy into the receive
 * buffer (issue 6): the worker reads at most CONN_RX_PREFIX bytes of a new
 * frame; when that frame is a lone, unsigned, unencrypted WRITE of at
 * least CONN_RX_SPLICE_MIN bytes whose whole payload is already queued on
 * the socket (FIONREAD), it is dispatched with only its head in memory,
 * and the WRITE handler moves the payload socket -> pipe -> file with
 * splice(2): one copy (into the page cache) instead of two.
 *
 * Why "already queued": the worker must never wait on one client's
 * socket.  A payload still in flight is read into the buffer as before
 * (the copy path), so nothing here can block, and after dispatch every
 * byte of the frame is taken off the socket (by the handler, or drained
 * here when the request was refused) so the stream stays framed.
 *
 * The pipe is one per worker, not per connection: the worker is one
 * thread and the pipe is empty again whenever a function here returns,
 * so connections never see each other's bytes, and 2,000 idle
 * connections do not hold 4,000 pipe fds.
 *
 * A payload larger than the receive window (a fresh connection's first
 * 1 MiB WRITE: smbclient's uploads) is never all queued at once.  For it
 * the connection takes a pipe of its own (RX_WAIT_PIPE) and the payload
 * is spliced socket -> pipe as it arrives, which takes it off the socket
 * so the window reopens; nothing else of that connection is read
 * meanwhile (its next frames are behind the payload), other connections
 * go on.  Once the whole payload is in the pipe (or the pipe is full and
 * the rest is all queued on the socket) the frame is dispatched as above
 * and the handler splices pipe -> file, then any rest socket -> worker
 * pipe -> file.  The pipe lives only in that state: afterwards it goes
 * to a few spare pipes of the worker (RX_SPARE_MAX; steady state makes
 * none), at most RX_PIPE_CONNS connections buffer at once (the others
 * take the copy path), and one that sent nothing for CONN_RX_STALL_SECS
 * gives its pipe back (conn_rx_tick), so fds stay bounded whatever 2,000
 * connections do.  Whatever goes wrong on
 * the way (the kernel refuses the pipe size, the pipe fills up with
 * small segments, the session goes away) the pipe's bytes are read back
 * into the receive buffer behind the head and the frame finishes by the
 * copy path, which has room for any frame.
 */

/*
 * Buffer sizes (issue 20).
 *
 * A connection starts with 64 KiB buffers (CONN_BUF_SMALL) and takes the
 * 8 MiB ones between two frames once one of its sessions has a disk tree
 * or it is a channel of a session (worker/conn_rx.c conn_rx_grow):
 * anonymous and IPC$-only connections never get them, and a larger frame
 * there ends the connection.
 */
#include "worker/conn_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/smb2_hdr.h"
#include "worker/dispatch.h"
#include "worker/relay.h"
#include "worker/worker.h"

#define RX_WRITE_BODY	48		/* MS-SMB2 2.2.21 fixed part */
#define RX_HEAD		(SMB2_FRAME_LEN + SMB2_HDR_LEN + RX_WRITE_BODY)
#define RX_PIPE_SIZE	(1u << 20)

/* struct conn_private rx_wait */
#define RX_WAIT_NONE	0
#define RX_WAIT_LOWAT	1	/* SO_RCVLOWAT raised for the frame's rest */
#define RX_WAIT_COPY	2	/* this frame goes by the copy path */
#define RX_WAIT_PIPE	3	/* payload being buffered in the conn's pipe */

/* Pipes of connections in RX_WAIT_PIPE, and spares kept for the next. */
#define RX_PIPE_CONNS	64
#define RX_SPARE_MAX	2

struct rx_spare {
	int	fd[2];
	size_t	cap;
};

static struct rx_spare rx_spares[RX_SPARE_MAX];
static unsigned rx_nspare;
static unsigned rx_nbuffering;
/* The connections holding a pipe (for the stall tick), in any order. */
static struct conn *rx_bufconns[RX_PIPE_CONNS];

static int rx_pipe[2] = { -1, -1 };
static size_t rx_pipe_cap;

static void
rx_pipe_reset(void)
{
	if (rx_pipe[0] >= 0) {
		close(rx_pipe[0]);
		close(rx_pipe[1]);
	}
	rx_pipe[0] = rx_pipe[1] = -1;
}

static int
rx_pipe_get(void)
{
	int sz;

	if (rx_pipe[0] >= 0)
		return 0;
	if (pipe2(rx_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		rx_pipe[0] = rx_pipe[1] = -1;
		return -errno;
	}
	/* 1 MiB is the default pipe-max-size; a smaller pipe only loops more. */
	sz = fcntl(rx_pipe[1], F_SETPIPE_SZ, (int)RX_PIPE_SIZE);
	if (sz < 0)
		sz = fcntl(rx_pipe[1], F_GETPIPE_SZ);
	rx_pipe_cap = sz > 0 ? (size_t)sz : 65536;
	return 0;
}

static void
rx_lowat_set(struct conn *c, int n)
{
	struct conn_private *pv = c->priv;

	if (n == pv->rx_lowat || (n <= 1 && pv->rx_lowat <= 1))
		return;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &n, sizeof(n)) == 0)
		pv->rx_lowat = n;
}

size_t
conn_rx_read_want(struct conn *c, size_t room)
{
	struct conn_private *pv = c->priv;
	long len;
	size_t end;

	/*
	 * A new frame: read its head and what small requests fit, but not
	 * the bulk of a large WRITE, which may go by splice.
	 */
	if (pv->rlen < SMB2_FRAME_LEN + SMB2_HDR_LEN) {
		rx_lowat_set(c, 1);	/* not expected to be raised: be safe */
		pv->rx_wait = RX_WAIT_NONE;
		return room < CONN_RX_PREFIX - pv->rlen ? room :
		    CONN_RX_PREFIX - pv->rlen;
	}
	/* Waiting for a WRITE's payload to be all queued: see rx_queued. */
	if (pv->rx_wait == RX_WAIT_LOWAT || pv->rx_wait == RX_WAIT_PIPE)
		return 0;
	/* Within a frame: up to its end, so the next one starts a read. */
	len = smb2_frame_decode(pv->rbuf);
	if (len < 0)
		return room;
	end = (size_t)len + SMB2_FRAME_LEN;
	if (end > pv->rlen && end - pv->rlen < room)
		return end - pv->rlen;
	return room;
}

/* Is the frame at rbuf (length len, incomplete) a WRITE we may splice? */
static int
rx_eligible(struct conn *c, size_t len)
{
	struct conn_private *pv = c->priv;
	const uint8_t *m = pv->rbuf + SMB2_FRAME_LEN;
	const uint8_t *b = m + SMB2_HDR_LEN;
	struct session *s;
	struct tree *t;
	uint32_t flags, dlen;

	if (pv->rlen < RX_HEAD || len <= pv->rlen - SMB2_FRAME_LEN)
		return 0;
	if (smb2_magic(m, SMB2_HDR_LEN) != SMB2_MAGIC_SMB2 ||
	    le16_get(m + 12) != SMB2_WRITE)
		return 0;
	flags = le32_get(m + 16);
	if (flags & (SMB2_FLAGS_SIGNED | SMB2_FLAGS_RELATED_OPERATIONS |
	    SMB2_FLAGS_SERVER_TO_REDIR) || le32_get(m + 20) != 0)
		return 0;
	/* The payload right after the fixed part, ending the frame. */
	dlen = le32_get(b + 4);
	if (le16_get(b) != 49 ||
	    le16_get(b + 2) != SMB2_HDR_LEN + RX_WRITE_BODY ||
	    dlen < CONN_RX_SPLICE_MIN ||
	    (size_t)dlen + SMB2_HDR_LEN + RX_WRITE_BODY != len)
		return 0;
	/*
	 * Requests dispatch would answer with an error need not be
	 * excluded (the payload is drained then), but those that must be
	 * verified or decrypted as a whole, and IPC$ pipes (whose handler
	 * reads the data from memory), are.
	 */
	s = conn_session_find(c, le64_get(m + 40));
	if (s == NULL || s->state != SESS_VALID || s->encrypt ||
	    s->signing_required)
		return 0;
	t = conn_tree_find(c, s, le32_get(m + 36));
	if (t == NULL || t->is_ipc || t->encrypt)
		return 0;
	return 1;
}

/*
 * Is the rest of the frame (need bytes) all queued on the socket (1)?  If
 * not, the first time the socket's SO_RCVLOWAT is raised to it, so epoll
 * wakes the worker once it is all there (no copy of the part that came
 * first, no wakeup per segment) and conn_read reads nothing meanwhile
 * (0); woken short of it (the kernel caps the low mark at half the
 * receive buffer and wakes when the window closes: a payload larger than
 * the window), 2: buffer it in a pipe (rx_buffer_start).
 */
static int
rx_queued(struct conn *c, size_t need)
{
	struct conn_private *pv = c->priv;
	int avail;

	if (pv->rx_wait == RX_WAIT_COPY)
		return 0;
	if (ioctl(c->fd, FIONREAD, &avail) == 0 && avail >= 0 &&
	    (size_t)avail >= need) {
		if (pv->rx_wait == RX_WAIT_LOWAT)
			rx_lowat_set(c, 1);
		pv->rx_wait = RX_WAIT_NONE;
		return 1;
	}
	if (pv->rx_wait == RX_WAIT_NONE && need <= INT32_MAX) {
		rx_lowat_set(c, (int)need);
		pv->rx_wait = RX_WAIT_LOWAT;
		return 0;
	}
	if (pv->rx_wait == RX_WAIT_LOWAT)
		return 2;
	rx_lowat_set(c, 1);
	pv->rx_wait = RX_WAIT_COPY;
	return 0;
}

/*
 * Reads n bytes that are known to be queued (socket or pipe) into the
 * receive buffer at pos.  0 or -errno; -EIO if they are not there.
 */
static int
rx_read_exact(struct conn *c, int fd, size_t pos, size_t n)
{
	struct conn_private *pv = c->priv;
	ssize_t k;
	int guard;

	if (pos > pv->rcap || n > pv->rcap - pos)
		return -ENOBUFS;
	for (guard = 0; n > 0 && guard < 1 << 16; guard++) {
		k = read(fd, pv->rbuf + pos, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? -EIO : -errno;
		if (k == 0)
			return -ECONNRESET;
		pos += (size_t)k;
		n -= (size_t)k;
	}
	return n == 0 ? 0 : -EIO;
}

/*
 * The connection's own pipe for RX_WAIT_PIPE, of at least need bytes: a
 * spare if one is big enough or can be made so, else a new one.  0 or
 * -errno (then the frame takes the copy path).
 */
static int
rx_cpipe_get(struct conn *c, size_t need)
{
	struct conn_private *pv = c->priv;
	struct rx_spare sp;
	int sz;

	if (rx_nbuffering >= RX_PIPE_CONNS || need > INT32_MAX)
		return -EMFILE;
	if (rx_nspare > 0)
		sp = rx_spares[--rx_nspare];
	else {
		if (pipe2(sp.fd, O_CLOEXEC | O_NONBLOCK) < 0)
			return -errno;
		sp.cap = 0;
	}
	/*
	 * The kernel refuses sizes past fs.pipe-max-size (1 MiB) or the
	 * user's pipe-user-pages-soft quota to an unprivileged worker.
	 */
	if (sp.cap < need && sp.cap < RX_PIPE_SIZE) {
		/*
		 * A payload larger than the pipe may have is buffered up to
		 * the pipe's size, and its rest awaited on the socket.
		 */
		sz = fcntl(sp.fd[1], F_SETPIPE_SZ, (int)need);
		if (sz < 0 && need > RX_PIPE_SIZE)
			sz = fcntl(sp.fd[1], F_SETPIPE_SZ, (int)RX_PIPE_SIZE);
		if (sz < 0 || (size_t)sz < (need < RX_PIPE_SIZE ? need :
		    RX_PIPE_SIZE)) {
			int err = sz < 0 ? errno : ENOSPC;

			close(sp.fd[0]);
			close(sp.fd[1]);
			return -err;
		}
		sp.cap = (size_t)sz;
	}
	pv->rx_pfd[0] = sp.fd[0];
	pv->rx_pfd[1] = sp.fd[1];
	pv->rx_pcap = sp.cap;
	pv->rx_piped = 0;
	pv->rx_pfull = 0;
	pv->rx_ptime = conn_now();
	rx_bufconns[rx_nbuffering++] = c;
	worker_tick_arm();	/* the stall rule: conn_rx_tick */
	return 0;
}

/* Ends RX_WAIT_PIPE's hold of the pipe: a spare if empty, else closed. */
static void
rx_cpipe_put(struct conn *c, int empty)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	if (pv->rx_pfd[0] < 0)
		return;
	if (empty && rx_nspare < RX_SPARE_MAX) {
		rx_spares[rx_nspare].fd[0] = pv->rx_pfd[0];
		rx_spares[rx_nspare].fd[1] = pv->rx_pfd[1];
		rx_spares[rx_nspare].cap = pv->rx_pcap;
		rx_nspare++;
	} else {
		close(pv->rx_pfd[0]);
		close(pv->rx_pfd[1]);
	}
	pv->rx_pfd[0] = pv->rx_pfd[1] = -1;
	pv->rx_piped = 0;
	pv->rx_pfull = 0;
	for (i = 0; i < rx_nbuffering; i++)
		if (rx_bufconns[i] == c) {
			rx_bufconns[i] = rx_bufconns[--rx_nbuffering];
			break;
		}
}

void
conn_rx_release(struct conn *c)
{
	/* Disconnected mid-payload: its bytes go with the pipe. */
	rx_cpipe_put(c, 0);
	if (c->priv->rx_wait == RX_WAIT_PIPE)
		c->priv->rx_wait = RX_WAIT_NONE;
}

/*
 * Leaves RX_WAIT_PIPE for the copy path: the pipe's bytes go back into
 * the receive buffer behind the head (the frame fits it: conn_process
 * checked its length), the low mark goes back to 1 (which also wakes
 * epoll if bytes are queued), and conn_read reads the rest.  0 or -1
 * (the bytes could not be read back: framing is lost).
 */
static int
rx_unbuffer(struct conn *c)
{
	struct conn_private *pv = c->priv;
	int rc = 0;

	if (pv->rx_piped > 0) {
		rc = rx_read_exact(c, pv->rx_pfd[0], pv->rlen, pv->rx_piped);
		if (rc == 0)
			pv->rlen += pv->rx_piped;
	}
	rx_cpipe_put(c, rc == 0);
	rx_lowat_set(c, 1);
	pv->rx_wait = RX_WAIT_COPY;
	return rc == 0 ? 0 : -1;
}

int
conn_rx_tick(void)
{
	uint32_t now = conn_now();
	unsigned i;

	/*
	 * A client that stopped mid-payload: its bytes go to the receive
	 * buffer (as the copy path would hold them) and the pipe is freed;
	 * the connection stays, under whatever rules hold for a partial
	 * frame.  A failed read-back loses framing: the socket is shut
	 * down, so its next event (EOF) closes the connection.
	 */
	for (i = 0; i < rx_nbuffering; ) {
		struct conn *c = rx_bufconns[i];

		if (now - c->priv->rx_ptime < CONN_RX_STALL_SECS) {
			i++;
			continue;
		}
		conn_warnx(c, "WRITE payload stalled for %d s: pipe released",
		    CONN_RX_STALL_SECS);
		if (rx_unbuffer(c) < 0)
			(void)shutdown(c->fd, SHUT_RDWR);
		/* rx_bufconns[i] now holds another connection, or none */
	}
	return rx_nbuffering > 0;
}

/*
 * Moves what is queued of the frame (ending at rbuf offset end) from the
 * socket into the connection's pipe.  1 when the whole payload is in the
 * pipe, or the pipe is full and the rest is all queued on the socket (a
 * payload larger than the pipe may be: the handler takes the pipe's part
 * first, then the socket's); 0 when more is awaited (SO_RCVLOWAT set to
 * what is missing, so epoll wakes when it is all there or the window
 * closes); 2 when the pipe is full and, woken again, the socket still
 * does not hold the rest (the copy path takes over; a pipe also fills
 * early with segments smaller than pages: it counts buffers, not bytes);
 * -1 on EOF or a socket error.
 */
static int
rx_pump(struct conn *c, size_t end)
{
	struct conn_private *pv = c->priv;
	size_t rest;
	ssize_t k;
	int guard, avail;

	for (guard = 0; guard < 1 << 16; guard++) {
		rest = end - pv->rlen - pv->rx_piped;
		if (rest == 0)
			return 1;
		k = splice(c->fd, NULL, pv->rx_pfd[1], NULL, rest,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			return -1;		/* EOF mid-payload */
		if (k < 0 && errno != EAGAIN)
			return -1;
		if (k > 0) {
			pv->rx_piped += (size_t)k;
			pv->rx_ptime = conn_now();
			if ((size_t)k == rest)
				return 1;
		}
		/* Short: is the socket empty (wait) or the pipe full? */
		if (ioctl(c->fd, FIONREAD, &avail) < 0)
			return -1;
		if (avail <= 0) {
			rest = end - pv->rlen - pv->rx_piped;
			rx_lowat_set(c, rest > INT32_MAX ? INT32_MAX :
			    (int)rest);
			return 0;
		}
		if (k < 0) {			/* queued bytes, no room */
			rest = end - pv->rlen - pv->rx_piped;
			if ((size_t)avail >= rest)
				return 1;
			if (pv->rx_pfull)
				return 2;
			pv->rx_pfull = 1;
			rx_lowat_set(c, rest > INT32_MAX ? INT32_MAX :
			    (int)rest);
			return 0;
		}
	}
	return 2;
}

/*
 * Reads the unread part of the frame being dispatched into the receive
 * buffer: the connection pipe's part, then the socket's.  0 or -errno.
 */
static int
rx_read_rest(struct conn *c)
{
	struct conn_private *pv = c->priv;
	int rc;

	if (pv->rx_pos < pv->rx_pend) {
		rc = rx_read_exact(c, pv->rx_pfd[0], pv->rx_pos,
		    pv->rx_pend - pv->rx_pos);
		if (rc < 0)
			return rc;
		pv->rx_pos = pv->rx_pend;
	}
	if (pv->rx_pos < pv->rx_end) {
		rc = rx_read_exact(c, c->fd, pv->rx_pos,
		    pv->rx_end - pv->rx_pos);
		if (rc < 0)
			return rc;
		pv->rx_pos = pv->rx_end;
	}
	return 0;
}

/*
 * Dispatches the frame at rbuf (length len), whose payload after the
 * head is: piped bytes in the connection's pipe, the rest queued on the
 * socket.
 */
static int
rx_dispatch(struct conn *c, size_t len, size_t piped)
{
	struct conn_private *pv = c->priv;
	size_t end = len + SMB2_FRAME_LEN;
	int r, rc = 1;

	pv->rx_active = 1;
	pv->rx_pos = pv->rlen;
	pv->rx_pend = pv->rlen + piped;
	pv->rx_end = end;
	r = dispatch_frame(c, pv->rbuf + SMB2_FRAME_LEN, len);
	if (r < 0)
		rc = -1;
	/* Refused (or stopped half-way): drain, so the stream stays framed. */
	if (pv->rx_pos < end && rx_read_rest(c) < 0)
		rc = -1;	/* undrainable: framing is lost */
	if (pv->rx_wait == RX_WAIT_PIPE) {
		rx_cpipe_put(c, pv->rx_pos >= pv->rx_pend);
		rx_lowat_set(c, 1);
		pv->rx_wait = RX_WAIT_NONE;
	}
	pv->rx_active = 0;
	pv->rx_pend = 0;
	pv->rlen = 0;		/* the whole frame is consumed */
	return rc;
}

int
conn_rx_splice_frame(struct conn *c, size_t len)
{
	struct conn_private *pv = c->priv;
	size_t end = len + SMB2_FRAME_LEN;
	int q;

	if (pv->role != CONN_ROLE_WORKER)
		return 0;
	if (pv->rx_wait == RX_WAIT_PIPE) {
		/*
		 * Checked again at each wakeup: if the session or tree went
		 * meanwhile, the frame is finished by the copy path.
		 */
		if (!rx_eligible(c, len))
			q = 2;
		else
			q = rx_pump(c, end);
		if (q < 0)
			return -1;
		if (q == 0)
			return 0;
		if (q == 2)	/* 1: conn_process looks at rbuf again */
			return rx_unbuffer(c) < 0 ? -1 : 1;
		return rx_dispatch(c, len, pv->rx_piped);
	}
	if (!rx_eligible(c, len) || rx_pipe_get() < 0)
		return 0;
	q = rx_queued(c, end - pv->rlen);
	if (q == 1)
		return rx_dispatch(c, len, 0);
	if (q == 0)
		return 0;
	/* Woken short of the payload: buffer it as it comes. */
	if (rx_cpipe_get(c, end - pv->rlen) < 0) {
		rx_lowat_set(c, 1);
		pv->rx_wait = RX_WAIT_COPY;
		return 0;
	}
	pv->rx_wait = RX_WAIT_PIPE;
	q = rx_pump(c, end);
	if (q < 0)
		return -1;
	if (q == 0)
		return 0;
	if (q == 2)
		return rx_unbuffer(c) < 0 ? -1 : 1;
	return rx_dispatch(c, len, pv->rx_piped);
}

/* The spliced frame being dispatched, when req is it. */
static struct conn_private *
rx_of(const struct smb2_req *req)
{
	struct conn_private *pv = req->conn->priv;

	if (!pv->rx_active || req->hdr != pv->rbuf + SMB2_FRAME_LEN)
		return NULL;
	return pv;
}

size_t
conn_req_payload_unread(const struct smb2_req *req)
{
	struct conn_private *pv = rx_of(req);

	return pv != NULL ? pv->rx_end - pv->rx_pos : 0;
}

int
conn_req_payload_load(struct smb2_req *req)
{
	struct conn_private *pv = rx_of(req);

	if (pv == NULL || pv->rx_pos >= pv->rx_end)
		return 0;
	return rx_read_rest(req->conn);
}

/* The copy path from payload byte at rbuf pos (file offset o) on. */
static ssize_t
rx_copy_rest(struct smb2_req *req, int fd, loff_t o, size_t pos, size_t len)
{
	struct conn_private *pv = req->conn->priv;
	ssize_t k;
	int guard, rc;

	if (pv->rx_pos < pv->rx_end) {
		rc = rx_read_rest(req->conn);
		if (rc < 0)
			return rc;
	}
	for (guard = 0; pos < pv->rx_end && guard < 1 << 16; guard++) {
		k = pwrite(fd, pv->rbuf + pos, pv->rx_end - pos, o);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		pos += (size_t)k;
		o += k;
	}
	return pos == pv->rx_end ? (ssize_t)len : -EIO;
}

ssize_t
conn_req_payload_write(struct smb2_req *req, const uint8_t *data, int fd,
    uint64_t off, size_t len)
{
	struct conn_private *pv = rx_of(req);
	struct conn *c = req->conn;
	size_t mem, inpipe;
	loff_t o;
	ssize_t k;
	int guard, rc;

	if (pv == NULL || pv->rbuf + pv->rx_end - len != data)
		return -EINVAL;
	/* The head already in the buffer, by pwrite. */
	mem = len - (pv->rx_end - pv->rx_pos);
	o = (loff_t)off;
	for (guard = 0; mem > 0 && guard < 1 << 16; guard++) {
		k = pwrite(fd, data, mem, o);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		data += k;
		mem -= (size_t)k;
		o += k;
	}
	if (mem > 0)
		return -EIO;
	/* Buffered in the connection's pipe (RX_WAIT_PIPE): pipe -> file. */
	for (guard = 0; pv->rx_pos < pv->rx_pend && guard < 1 << 16;
	    guard++) {
		k = splice(pv->rx_pfd[0], NULL, fd, &o,
		    pv->rx_pend - pv->rx_pos, SPLICE_F_MOVE);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int err = k < 0 ? errno : EIO;

			/*
			 * The pipe still holds [rx_pos, rx_pend): a file
			 * that takes no splice gets the rest by the copy
			 * path; other errors are the answer and
			 * rx_dispatch drains the pipe and the socket.
			 */
			if (err == EINVAL)
				return rx_copy_rest(req, fd, o, pv->rx_pos, len);
			return -err;
		}
		pv->rx_pos += (size_t)k;
	}
	/* The rest: socket -> pipe -> file, a pipe's worth at a time. */
	for (guard = 0; pv->rx_pos < pv->rx_end && guard < 1 << 16; guard++) {
		size_t want = pv->rx_end - pv->rx_pos;

		if (want > rx_pipe_cap)
			want = rx_pipe_cap;
		k = splice(c->fd, NULL, rx_pipe[1], NULL, want,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)	/* queued bytes vanished: cannot go on */
			return k < 0 ? -errno : -ECONNRESET;
		inpipe = (size_t)k;
		pv->rx_pos += inpipe;
		while (inpipe > 0 && guard++ < 1 << 16) {
			k = splice(rx_pipe[0], NULL, fd, &o, inpipe,
			    SPLICE_F_MOVE);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				int err = k < 0 ? errno : EIO;

				/*
				 * The pipe's bytes go back into the buffer
				 * where they belong, so it is empty for the
				 * next request.
				 */
				rc = rx_read_exact(c, rx_pipe[0],
				    pv->rx_pos - inpipe, inpipe);
				if (rc < 0) {
					rx_pipe_reset();
					return rc;
				}
				/*
				 * A file that takes no splice (EINVAL):
				 * the rest by the copy path.  Other errors
				 * (ENOSPC, EFBIG, EIO...) are the answer;
				 * the socket's rest is drained by
				 * conn_rx_splice_frame.
				 */
				if (err == EINVAL)
					return rx_copy_rest(req, fd, o,
					    pv->rx_pos - inpipe, len);
				return -err;
			}
			inpipe -= (size_t)k;
		}
		if (inpipe > 0)
			return -EIO;
	}
	if (pv->rx_pos < pv->rx_end)
		return -EIO;
	return (ssize_t)len;
}

/*
 * Does a session of c have a disk tree, is c a channel of a session, or
 * does c carry another user's session (its frames as large as his)?
 */
static int
rx_wants_big(const struct conn *c)
{
	unsigned i;

	for (i = 0; i < CONN_MAX_TREES; i++)
		if (c->trees[i].in_use && !c->trees[i].is_ipc)
			return 1;
	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use && c->sessions[i].bound != NULL)
			return 1;
	/* another user's session on it: its trees are in its own worker */
	return relay_any(c);
}

/*
 * Called between frames (nothing of the connection's output pending, no
 * receive armed, no response being built): conn_set_bufsize keeps what
 * rbuf holds and may drop sbuf.  The big buffers cost address space only
 * until large I/O touches them.
 */
int
conn_rx_grow(struct conn *c)
{
	struct conn_private *pv = c->priv;

	if (pv->rcap >= CONN_BUF_BIG || pv->rx_armed ||
	    conn_output_pending(c) || !rx_wants_big(c))
		return 0;
	return conn_set_bufsize(c, CONN_BUF_BIG);
}

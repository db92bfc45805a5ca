/*
 * Request counters (interface and rules in worker/metrics.h).
 */
#include "worker/metrics.h"

#include <string.h>
#include <time.h>

#include "proto/cur.h"

struct metrics metrics;

const uint32_t metrics_bucket_us[METRICS_NBUCKETS - 1] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
	250000, 500000, 1000000,
};

/* MS-SMB2 2.2.1.2 command codes, in order. */
static const char *const metrics_names[METRICS_NCMD] = {
	"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT",
	"TREE_DISCONNECT", "CREATE", "CLOSE", "FLUSH", "READ", "WRITE",
	"LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY",
	"CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK",
};

#define METRICS_HDR_LEN		64	/* SMB2 header, MS-SMB2 2.2.1 */
#define METRICS_READ_RSP_FIXED	16	/* READ response before the data, 2.2.20 */
#define METRICS_WRITE_REQ_FIXED	48	/* WRITE request before the data, 2.2.21 */
#define METRICS_CMD_READ	0x0008
#define METRICS_CMD_WRITE	0x0009

const char *
metrics_cmd_name(unsigned cmd)
{
	return cmd < METRICS_NCMD ? metrics_names[cmd] : "UNKNOWN";
}

uint64_t
metrics_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
metrics_add_status(struct metrics_cmd *mc, uint32_t status, uint64_t n)
{
	int i;

	for (i = 0; i < METRICS_NSTATUS; i++) {
		if (mc->status_count[i] != 0 && mc->status[i] == status) {
			mc->status_count[i] += n;
			return;
		}
	}
	for (i = 0; i < METRICS_NSTATUS; i++) {
		if (mc->status_count[i] == 0) {
			mc->status[i] = status;
			mc->status_count[i] = n;
			return;
		}
	}
	mc->status_other += n;
}

void
metrics_request(uint16_t cmd, uint32_t status, size_t req_len, size_t rsp_len,
    uint64_t t0_ns)
{
	struct metrics_cmd *mc;
	uint64_t us;
	int b;

	if (cmd >= METRICS_NCMD) {
		metrics.bad_command++;
		return;
	}
	mc = &metrics.cmd[cmd];
	us = (metrics_clock() - t0_ns) / 1000;
	mc->count++;
	mc->lat_sum_us += us;
	for (b = 0; b < METRICS_NBUCKETS - 1; b++)
		if (us <= metrics_bucket_us[b])
			break;
	mc->lat_bucket[b]++;
	metrics_add_status(mc, status, 1);
	if (status != 0)
		return;
	if (cmd == METRICS_CMD_READ &&
	    rsp_len > METRICS_HDR_LEN + METRICS_READ_RSP_FIXED)
		metrics.bytes_read += rsp_len - METRICS_HDR_LEN -
		    METRICS_READ_RSP_FIXED;
	else if (cmd == METRICS_CMD_WRITE &&
	    req_len > METRICS_HDR_LEN + METRICS_WRITE_REQ_FIXED)
		metrics.bytes_written += req_len - METRICS_HDR_LEN -
		    METRICS_WRITE_REQ_FIXED;
}

int
metrics_encode(const struct metrics *m, uint8_t *buf, size_t cap)
{
	struct wcur w;
	int i, j;

	wcur_init(&w, buf, cap);
	wcur_le32(&w, METRICS_VERSION);
	wcur_le32(&w, METRICS_NCMD);
	wcur_le32(&w, METRICS_NBUCKETS);
	wcur_le32(&w, METRICS_NSTATUS);
	wcur_le64(&w, m->bytes_read);
	wcur_le64(&w, m->bytes_written);
	wcur_le64(&w, m->bad_command);
	for (i = 0; i < METRICS_NCMD; i++) {
		const struct metrics_cmd *mc = &m->cmd[i];

		wcur_le64(&w, mc->count);
		wcur_le64(&w, mc->lat_sum_us);
		for (j = 0; j < METRICS_NBUCKETS; j++)
			wcur_le64(&w, mc->lat_bucket[j]);
		for (j = 0; j < METRICS_NSTATUS; j++) {
			wcur_le32(&w, mc->status[j]);
			wcur_le64(&w, mc->status_count[j]);
		}
		wcur_le64(&w, mc->status_other);
	}
	wcur_le64(&w, m->gate.conns);
	wcur_le64(&w, m->gate.logins);
	wcur_le64(&w, m->gate.auth_failures);
	wcur_le64(&w, m->gate.timeouts);
	for (i = 0; i < METRICS_NTXN; i++) {
		wcur_le64(&w, m->txn[i].txns);
		wcur_le64(&w, m->txn[i].hold_ns);
		wcur_le64(&w, m->txn[i].wait_ns);
		wcur_le64(&w, m->txn[i].main_txns);
	}
	return w.err ? -1 : (int)wcur_off(&w);
}

int
metrics_decode_add(struct metrics *sum, const uint8_t *p, size_t len)
{
	struct metrics in;
	struct cur c;
	int i, j;

	memset(&in, 0, sizeof(in));
	cur_init(&c, p, len);
	if (cur_le32(&c) != METRICS_VERSION || cur_le32(&c) != METRICS_NCMD ||
	    cur_le32(&c) != METRICS_NBUCKETS || cur_le32(&c) != METRICS_NSTATUS)
		return -1;
	in.bytes_read = cur_le64(&c);
	in.bytes_written = cur_le64(&c);
	in.bad_command = cur_le64(&c);
	for (i = 0; i < METRICS_NCMD; i++) {
		struct metrics_cmd *mc = &in.cmd[i];

		mc->count = cur_le64(&c);
		mc->lat_sum_us = cur_le64(&c);
		for (j = 0; j < METRICS_NBUCKETS; j++)
			mc->lat_bucket[j] = cur_le64(&c);
		for (j = 0; j < METRICS_NSTATUS; j++) {
			mc->status[j] = cur_le32(&c);
			mc->status_count[j] = cur_le64(&c);
		}
		mc->status_other = cur_le64(&c);
	}
	in.gate.conns = cur_le64(&c);
	in.gate.logins = cur_le64(&c);
	in.gate.auth_failures = cur_le64(&c);
	in.gate.timeouts = cur_le64(&c);
	for (i = 0; i < METRICS_NTXN; i++) {
		in.txn[i].txns = cur_le64(&c);
		in.txn[i].hold_ns = cur_le64(&c);
		in.txn[i].wait_ns = cur_le64(&c);
		in.txn[i].main_txns = cur_le64(&c);
	}
	if (c.err || cur_left(&c) != 0)
		return -1;
	metrics_add(sum, &in);
	return 0;
}

void
metrics_add(struct metrics *sum, const struct metrics *in)
{
	int i, j;

	sum->bytes_read += in->bytes_read;
	sum->bytes_written += in->bytes_written;
	sum->bad_command += in->bad_command;
	sum->gate.conns += in->gate.conns;
	sum->gate.logins += in->gate.logins;
	sum->gate.auth_failures += in->gate.auth_failures;
	sum->gate.timeouts += in->gate.timeouts;
	for (i = 0; i < METRICS_NTXN; i++) {
		sum->txn[i].txns += in->txn[i].txns;
		sum->txn[i].hold_ns += in->txn[i].hold_ns;
		sum->txn[i].wait_ns += in->txn[i].wait_ns;
		sum->txn[i].main_txns += in->txn[i].main_txns;
	}
	for (i = 0; i < METRICS_NCMD; i++) {
		struct metrics_cmd *s = &sum->cmd[i];
		const struct metrics_cmd *mc = &in->cmd[i];

		s->count += mc->count;
		s->lat_sum_us += mc->lat_sum_us;
		for (j = 0; j < METRICS_NBUCKETS; j++)
			s->lat_bucket[j] += mc->lat_bucket[j];
		for (j = 0; j < METRICS_NSTATUS; j++)
			if (mc->status_count[j] != 0)
				metrics_add_status(s, mc->status[j],
				    mc->status_count[j]);
		s->status_other += mc->status_other;
	}
}

/* The state env's writer lock (struct metrics_txn). */
static void
metrics_print_txn(FILE *f, const struct metrics *m)
{
	static const char *const kind[METRICS_NTXN] = { "create", "close",
	    "other" };
	int i;

	fputs("# HELP usmbd_state_write_transactions_total Write transactions "
	    "of the state envs, by kind.\n"
	    "# TYPE usmbd_state_write_transactions_total counter\n", f);
	for (i = 0; i < METRICS_NTXN; i++)
		fprintf(f, "usmbd_state_write_transactions_total{kind=\"%s\"} "
		    "%llu\n", kind[i], (unsigned long long)m->txn[i].txns);
	fputs("# HELP usmbd_state_main_write_transactions_total Of those, "
	    "the write transactions of the main env (sessions, workers, ids, "
	    "notify watches), by kind; the rest went to the data envs.\n"
	    "# TYPE usmbd_state_main_write_transactions_total counter\n", f);
	for (i = 0; i < METRICS_NTXN; i++)
		fprintf(f, "usmbd_state_main_write_transactions_total{kind=\"%s\"} "
		    "%llu\n", kind[i], (unsigned long long)m->txn[i].main_txns);
	fputs("# HELP usmbd_state_write_hold_seconds_total Time the state "
	    "env's writer lock was held, from the lock taken to the commit "
	    "done.\n# TYPE usmbd_state_write_hold_seconds_total counter\n", f);
	for (i = 0; i < METRICS_NTXN; i++)
		fprintf(f, "usmbd_state_write_hold_seconds_total{kind=\"%s\"} "
		    "%.9f\n", kind[i], m->txn[i].hold_ns / 1e9);
	fputs("# HELP usmbd_state_write_wait_seconds_total Time from asking "
	    "for the state env's writer lock to holding it (with the "
	    "transaction's start).\n"
	    "# TYPE usmbd_state_write_wait_seconds_total counter\n", f);
	for (i = 0; i < METRICS_NTXN; i++)
		fprintf(f, "usmbd_state_write_wait_seconds_total{kind=\"%s\"} "
		    "%.9f\n", kind[i], m->txn[i].wait_ns / 1e9);
}

void
metrics_print(FILE *f, const struct metrics *m)
{
	int i, j;

	fputs("# HELP usmbd_requests_total SMB2 requests answered, by command "
	    "and NTSTATUS.\n# TYPE usmbd_requests_total counter\n", f);
	for (i = 0; i < METRICS_NCMD; i++) {
		const struct metrics_cmd *mc = &m->cmd[i];

		for (j = 0; j < METRICS_NSTATUS; j++)
			if (mc->status_count[j] != 0)
				fprintf(f, "usmbd_requests_total{command=\"%s\","
				    "status=\"0x%08x\"} %llu\n", metrics_names[i],
				    mc->status[j],
				    (unsigned long long)mc->status_count[j]);
		if (mc->status_other != 0)
			fprintf(f, "usmbd_requests_total{command=\"%s\","
			    "status=\"other\"} %llu\n", metrics_names[i],
			    (unsigned long long)mc->status_other);
	}
	fputs("# HELP usmbd_request_duration_seconds Time from the start of "
	    "a request to its response.\n"
	    "# TYPE usmbd_request_duration_seconds histogram\n", f);
	for (i = 0; i < METRICS_NCMD; i++) {
		const struct metrics_cmd *mc = &m->cmd[i];
		uint64_t cum = 0;

		if (mc->count == 0)
			continue;
		for (j = 0; j < METRICS_NBUCKETS; j++) {
			cum += mc->lat_bucket[j];
			if (j < METRICS_NBUCKETS - 1)
				fprintf(f, "usmbd_request_duration_seconds_bucket"
				    "{command=\"%s\",le=\"%g\"} %llu\n",
				    metrics_names[i],
				    metrics_bucket_us[j] / 1e6,
				    (unsigned long long)cum);
			else
				fprintf(f, "usmbd_request_duration_seconds_bucket"
				    "{command=\"%s\",le=\"+Inf\"} %llu\n",
				    metrics_names[i], (unsigned long long)cum);
		}
		fprintf(f, "usmbd_request_duration_seconds_sum{command=\"%s\"} "
		    "%.6f\n", metrics_names[i], mc->lat_sum_us / 1e6);
		fprintf(f, "usmbd_request_duration_seconds_count{command=\"%s\"} "
		    "%llu\n", metrics_names[i], (unsigned long long)mc->count);
	}
	fprintf(f, "# HELP usmbd_read_bytes_total File data sent by READ.\n"
	    "# TYPE usmbd_read_bytes_total counter\n"
	    "usmbd_read_bytes_total %llu\n"
	    "# HELP usmbd_written_bytes_total File data received by WRITE.\n"
	    "# TYPE usmbd_written_bytes_total counter\n"
	    "usmbd_written_bytes_total %llu\n",
	    (unsigned long long)m->bytes_read,
	    (unsigned long long)m->bytes_written);
	fprintf(f, "# HELP usmbd_gate_connections_total Connections the gates "
	    "took to log in.\n# TYPE usmbd_gate_connections_total counter\n"
	    "usmbd_gate_connections_total %llu\n"
	    "# HELP usmbd_gate_logins_total Logins the gates completed and "
	    "handed to a worker.\n# TYPE usmbd_gate_logins_total counter\n"
	    "usmbd_gate_logins_total %llu\n"
	    "# HELP usmbd_gate_auth_failures_total Logons the gates saw "
	    "refused.\n# TYPE usmbd_gate_auth_failures_total counter\n"
	    "usmbd_gate_auth_failures_total %llu\n"
	    "# HELP usmbd_gate_login_timeouts_total Connections the gates "
	    "closed at a login deadline.\n"
	    "# TYPE usmbd_gate_login_timeouts_total counter\n"
	    "usmbd_gate_login_timeouts_total %llu\n",
	    (unsigned long long)m->gate.conns,
	    (unsigned long long)m->gate.logins,
	    (unsigned long long)m->gate.auth_failures,
	    (unsigned long long)m->gate.timeouts);
	metrics_print_txn(f, m);
}

/*
 * usmbctl testparm, the Kerberos part: the keytab is read with MIT krb5
 * (as root, as the master reads it) and its cifs/ principals compared
 * with the names clients use for this server: the host name, its
 * canonical (DNS) name and the `netbios name`, each in `realm`.
 */
#include "daemon/usmbctl_krb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <krb5.h>

#include "daemon/conf.h"

#define KRB_NAMES	3

/* The names clients may use for this host, lower case. */
static int
usmbctl_krb_names(const struct conf *c, char names[KRB_NAMES][256])
{
	struct addrinfo hints, *ai = NULL;
	char host[256];
	int n = 0, i;

	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		snprintf(names[n++], 256, "%s", host);
		memset(&hints, 0, sizeof(hints));
		hints.ai_flags = AI_CANONNAME;
		if (getaddrinfo(host, NULL, &hints, &ai) == 0 && ai != NULL &&
		    ai->ai_canonname != NULL &&
		    strcasecmp(ai->ai_canonname, host) != 0)
			snprintf(names[n++], 256, "%s", ai->ai_canonname);
		if (ai != NULL)
			freeaddrinfo(ai);
	}
	snprintf(names[n++], 256, "%s", c->netbios_name);
	for (i = 0; i < n; i++)
		for (char *p = names[i]; *p != '\0'; p++)
			*p = (char)tolower((unsigned char)*p);
	return n;
}

/* Does the keytab at kt name cifs/NAME@realm for one of names? */
static int
usmbctl_krb_scan(krb5_context ctx, krb5_keytab kt, const char *realm,
    char names[KRB_NAMES][256], int nnames, int *nkeys, FILE *errf)
{
	krb5_kt_cursor cur;
	krb5_keytab_entry e;
	krb5_error_code ret;
	char *pn;
	int found = 0, i;

	*nkeys = 0;
	if ((ret = krb5_kt_start_seq_get(ctx, kt, &cur)) != 0)
		return -(int)ret;
	while (krb5_kt_next_entry(ctx, kt, &e, &cur) == 0) {
		(*nkeys)++;
		if (krb5_unparse_name(ctx, e.principal, &pn) == 0) {
			const char *at = strrchr(pn, '@');

			for (i = 0; i < nnames && at != NULL; i++)
				if (strncasecmp(pn, "cifs/", 5) == 0 &&
				    (size_t)(at - pn - 5) == strlen(names[i]) &&
				    strncasecmp(pn + 5, names[i],
				    strlen(names[i])) == 0 &&
				    (realm == NULL || strcasecmp(at + 1, realm) == 0))
					found = 1;
			if (strncasecmp(pn, "cifs/", 5) == 0)
				fprintf(errf, "keytab: %s (kvno %u)\n", pn,
				    (unsigned)e.vno);
			krb5_free_unparsed_name(ctx, pn);
		}
		krb5_free_keytab_entry_contents(ctx, &e);
	}
	(void)krb5_kt_end_seq_get(ctx, kt, &cur);
	return found;
}

int
usmbctl_testparm_krb(const char *path, const struct conf *c, FILE *errf)
{
	const char *kp = conf_keytab_path(c);
	char names[KRB_NAMES][256], ktname[4200];
	krb5_context ctx = NULL;
	krb5_keytab kt = NULL;
	struct stat st;
	int warn = 0, n, nkeys = 0, found, fd;

	if (c->username_map != NULL && c->username_map[0] != '\0' &&
	    access(c->username_map, R_OK) != 0) {
		fprintf(errf, "%s: warning: username map %s: %s\n", path,
		    c->username_map, strerror(errno));
		warn++;
	}
	if (c->kerberos_method == KRB_METHOD_OFF) {
		if (c->ntlm_disabled) {
			fprintf(errf, "%s: warning: `ntlm auth = no` without "
			    "`kerberos method`: no one can log in\n", path);
			warn++;
		}
		return warn;
	}
	if (kp == NULL) {
		fprintf(errf, "%s: warning: `kerberos method = dedicated keytab` "
		    "without `dedicated keytab file`: Kerberos is off\n", path);
		return warn + 1;
	}
	if (c->realm == NULL || c->realm[0] == '\0') {
		fprintf(errf, "%s: warning: no `realm`: principals map to "
		    "accounts only through `username map`\n", path);
		warn++;
	}
	fd = open(kp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(errf, "%s: warning: keytab %s: %s\n", path, kp,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return warn + 1;
	}
	close(fd);
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		fprintf(errf, "%s: warning: keytab %s is mode %04o: anyone who "
		    "can read it can pose as this server (0600 root)\n", path, kp,
		    (unsigned)(st.st_mode & 07777));
		warn++;
	}
	snprintf(ktname, sizeof(ktname), "FILE:%s", kp);
	if (krb5_init_context(&ctx) != 0 ||
	    krb5_kt_resolve(ctx, ktname, &kt) != 0) {
		fprintf(errf, "%s: warning: keytab %s cannot be read\n", path, kp);
		warn++;
		goto out;
	}
	n = usmbctl_krb_names(c, names);
	found = usmbctl_krb_scan(ctx, kt, c->realm, names, n, &nkeys, errf);
	if (found < 0 || nkeys == 0) {
		fprintf(errf, "%s: warning: keytab %s holds no keys\n", path, kp);
		warn++;
	} else if (found == 0) {
		fprintf(errf, "%s: warning: keytab %s has no cifs/ key for %s%s%s "
		    "(clients get tickets for cifs/<the name they use>)\n", path,
		    kp, names[0], n > 1 ? " or " : "", n > 1 ? names[n - 1] : "");
		warn++;
	}
out:
	if (kt != NULL)
		(void)krb5_kt_close(ctx, kt);
	if (ctx != NULL)
		krb5_free_context(ctx);
	return warn;
}

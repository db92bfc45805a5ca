/*
 * libFuzzer target: AppleDouble metadata blobs (proto/adouble.c), the
 * xattr user.org.netatalk.Metadata that any program of the user may
 * write.  Invariants: a Finder info found lies wholly inside the blob;
 * the record made from it carries the signature and version and that
 * Finder info; the Finder info set into the blob (in place or in a new
 * one) is found again, at the same place when the blob was well formed,
 * with every other byte of it kept.  The same bytes as the header of a
 * "._" file of any size: a fork found starts after the header and the
 * whole Finder info, lies wholly inside the file, and its length field
 * lies in the entry table.  And as a Mac's "._" file (adouble_conv_*,
 * Samba's ad_convert): what a parse accepts lies inside the bytes given,
 * every attribute's name and data too, and the converted header parses
 * as Samba's 82-byte layout with the fork where it says.  And as a name
 * (fruit:encoding = native): mapped either way, it never gains a '/'.
 *
 * Build: make build/fuzz/fuzz_adouble
 * Run:   build/fuzz/fuzz_adouble -max_total_time=60 t/fuzz/corpus/adouble
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/adouble.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t b[ADOUBLE_META_MAX], keep[ADOUBLE_META_MAX];
	uint8_t rec[AFPINFO_SIZE], in[AFPINFO_SIZE];
	long off = adouble_finderinfo_off(data, size), again;
	size_t len, i;

	if (off >= 0) {
		if ((size_t)off > size || size - (size_t)off < 32)
			abort();
		if (adouble_meta_to_afpinfo(data, size, rec) != 0 ||
		    !aapl_afpinfo_valid(rec, sizeof(rec)) ||
		    memcmp(rec + 16, data + off, 32) != 0)
			abort();
	} else if (adouble_meta_to_afpinfo(data, size, rec) != -1 ||
	    adouble_meta_listed(data, size) != 0)
		abort();
	{
		struct adouble_rsrc r;
		uint64_t fsize;

		/* the file's size from the input's tail, else its length */
		fsize = size;
		if (size >= ADOUBLE_RSRC_HDR + 4)
			fsize = (uint64_t)data[size - 1] << 24 |
			    (uint64_t)data[size - 2] << 16 |
			    (uint64_t)data[size - 3] << 8 | data[size - 4];
		if (adouble_rsrc_parse(data, size, fsize, &r) == 0 &&
		    (r.off < ADOUBLE_RSRC_HDR || r.off > fsize ||
		    r.len > fsize - r.off || r.len_at < ADOUBLE_HDR_LEN ||
		    r.len_at + 4 > ADOUBLE_HDR_LEN + 2 * ADOUBLE_ENTRY_LEN))
			abort();
	}
	{
		struct adouble_conv c;
		struct adouble_xattr x;
		struct adouble_rsrc r;
		uint8_t h[ADOUBLE_RSRC_HDR];
		char name[1024];
		unsigned i;

		if (adouble_conv_parse(data, size, size, &c) == 0) {
			if (c.rf_off + c.rf_len > size || c.fi_len < 32 ||
			    50 + (uint64_t)c.fi_len > c.rf_off)
				abort();
			for (i = 0; i < c.nattr; i++) {
				if (adouble_conv_xattr(data, size, &c, i,
				    &x) != 0 || x.name_len == 0 ||
				    x.name_len > 255 ||
				    (const uint8_t *)x.name < data ||
				    (const uint8_t *)x.name + x.name_len >
				    data + size ||
				    (uint64_t)x.off + x.len > size)
					abort();
				(void)adouble_xattr_stream_name(x.name,
				    x.name_len, name, sizeof(name));
			}
			adouble_conv_header(h, data, ADOUBLE_RSRC_HDR,
			    (uint32_t)c.rf_len);
			if (adouble_rsrc_parse(h, sizeof(h),
			    ADOUBLE_RSRC_HDR + c.rf_len, &r) != 0 ||
			    r.off != ADOUBLE_RSRC_HDR || r.len != c.rf_len ||
			    adouble_conv_wanted(h, sizeof(h)))
				abort();
		}
		(void)adouble_rfork_blank(data, size);
	}
	{
		/* fruit:encoding = native: never a '/' more, never longer */
		static char nm[1024], pv[4096];
		size_t k, n = size < sizeof(nm) - 1 ? size : sizeof(nm) - 1;
		size_t slash = 0, slash2 = 0, len;

		memcpy(nm, data, n);
		nm[n] = '\0';
		len = strlen(nm);
		for (k = 0; k < len; k++)
			slash += nm[k] == '/';
		if (adouble_name_native(nm) > len)
			abort();
		for (k = 0; nm[k] != '\0'; k++)
			slash2 += nm[k] == '/';
		if (slash2 != slash)
			abort();
		if (adouble_name_private(nm, strlen(nm), pv, sizeof(pv)) >= 0 &&
		    strchr(pv, '/') != NULL && slash == 0)
			abort();
	}
	if (size > sizeof(b))
		return 0;
	memcpy(b, data, size);
	memcpy(keep, data, size);
	memset(in, 0, sizeof(in));
	memcpy(in, "AFP", 4);
	in[6] = 1;
	for (i = 0; i < 32; i++)
		in[16 + i] = (uint8_t)(i * 7 + 1);
	len = adouble_meta_set(b, size, sizeof(b), in, 1577836800);
	again = adouble_finderinfo_off(b, len);
	if (again < 0 || memcmp(b + again, in + 16, 32) != 0 ||
	    adouble_meta_listed(b, len) != 1)
		abort();
	if (off >= 0) {
		if (len != size || again != off ||
		    memcmp(b, keep, (size_t)off) != 0 ||
		    memcmp(b + off + 32, keep + off + 32,
		    size - (size_t)off - 32) != 0)
			abort();
	} else if (len != ADOUBLE_META_SIZE) {
		abort();
	}
	return 0;
}

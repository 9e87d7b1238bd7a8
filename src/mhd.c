// SPDX-License-Identifier: GPL-2.0-only
/* libmicrohttpd, loaded by serve only (see mhd.h). */
#include "src/mhd.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "src/lib/util.h"

#ifndef MHD_SONAME
#define MHD_SONAME "libmicrohttpd.so.12"	/* Debian 12; the Makefile reads the real one */
#endif
#ifndef GNUTLS_SONAME
#define GNUTLS_SONAME "libgnutls.so.30"		/* the same */
#endif

static struct mhd_api api;
static const struct mhd_api *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define MHD_SYM(field, name) { offsetof(struct mhd_api, field), name, false }
#define TLS_SYM(field, name) { offsetof(struct mhd_api, field), name, true }

static const struct { size_t offset; const char *name; bool gnutls; } syms[] = {
	MHD_SYM(start_daemon, "MHD_start_daemon"),
	MHD_SYM(stop_daemon, "MHD_stop_daemon"),
	MHD_SYM(get_daemon_info, "MHD_get_daemon_info"),
	MHD_SYM(is_feature_supported, "MHD_is_feature_supported"),
	MHD_SYM(create_response_from_buffer, "MHD_create_response_from_buffer"),
	MHD_SYM(add_response_header, "MHD_add_response_header"),
	MHD_SYM(queue_response, "MHD_queue_response"),
	MHD_SYM(destroy_response, "MHD_destroy_response"),
	MHD_SYM(lookup_connection_value, "MHD_lookup_connection_value"),
	MHD_SYM(get_connection_values_n, "MHD_get_connection_values_n"),
	MHD_SYM(get_connection_info, "MHD_get_connection_info"),
	TLS_SYM(tls_set_request, "gnutls_certificate_server_set_request"),
	TLS_SYM(tls_set_verify_cert, "gnutls_session_set_verify_cert"),
};

static void mhd_load(void)
{
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	/* libmicrohttpd's own TLS stack, loaded with it */
	void *tls = lib ? dlopen(GNUTLS_SONAME, RTLD_NOW | RTLD_LOCAL) : NULL;
	size_t i;

	if (!lib || !tls) {
		pr_err("serve needs libmicrohttpd and GnuTLS: %s", dlerror());
		if (lib)
			dlclose(lib);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(syms); i++) {
		void *fn = dlsym(syms[i].gnutls ? tls : lib, syms[i].name);

		if (!fn) {
			pr_err("serve needs libmicrohttpd and GnuTLS: %s", dlerror());
			dlclose(tls);
			dlclose(lib);
			return;
		}
		/* POSIX: a function pointer and a void * convert through memcpy-like use */
		*(void **)((char *)&api + syms[i].offset) = fn;
	}
	loaded = &api;
}

const struct mhd_api *mhd_open(void)
{
	pthread_once(&once, mhd_load);
	return loaded;
}

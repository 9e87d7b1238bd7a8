/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libmicrohttpd, opened when serve starts listening. It links the TLS stack
 * (gnutls, p11-kit, nettle, gmp, ...), whose loading and constructors cost
 * every other verb 3.5 MB of RSS and ~2 ms of start-up it never uses
 * (docs/performance.md, "Memory"): so only serve loads it, by its soname,
 * and calls it through this table. The entries have the library's own
 * prototypes (<microhttpd.h>, <gnutls/gnutls.h>), checked at compile time.
 * The two of GnuTLS (the TLS stack libmicrohttpd brought in) make client
 * certificates required and verified during the handshake (--tls-client-ca).
 */
#ifndef LATPROF_MHD_H
#define LATPROF_MHD_H

#include <gnutls/gnutls.h>
#include <microhttpd.h>

struct mhd_api {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_is_feature_supported) *is_feature_supported;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_values_n) *get_connection_values_n;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(gnutls_certificate_server_set_request) *tls_set_request;
	__typeof__(gnutls_session_set_verify_cert) *tls_set_verify_cert;
};

/*
 * The library, loaded on the first call (later calls return the same
 * table). NULL when it cannot be loaded or lacks a function, said once with
 * the loader's reason.
 */
const struct mhd_api *mhd_open(void);

#endif

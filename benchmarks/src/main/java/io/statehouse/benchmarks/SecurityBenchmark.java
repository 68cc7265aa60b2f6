package io.statehouse.benchmarks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.statehouse.clickhouse.embedded.Credentials;
import io.statehouse.clickhouse.embedded.EmbeddedClickHouse;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPut;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.StringEntity;

/**
 * What tokens cost: GET at 16 callers and PUT at 64 callers, half of them against an instance
 * with a token configured (every request presents it; its scope and id globs are checked), half
 * against an open instance, at the same time, both on one engine. Target: at least 0.95x.
 */
public final class SecurityBenchmark {

	private static final String SECRET = "sth_benchmark-secret-0123456789abcdefghijklmnopqrst";

	public static void main(String[] args) throws Exception {
		Duration measure = Parameters.seconds("seconds", 5, 0.2);
		Duration warmup = Parameters.seconds("warmup", 1, 0.1);
		int rounds = Parameters.count("rounds", 3, 1);
		int seeded = Parameters.count("seeded", 2_000, 100);
		Path directory = Files.createTempDirectory("statehouse-security-bench");
		Credentials credentials = Credentials.random("default");
		String hash = HexFormat.of()
			.formatHex(MessageDigest.getInstance("SHA-256").digest(SECRET.getBytes(StandardCharsets.UTF_8)));
		try (EmbeddedClickHouse engine = EmbeddedClickHouse.start(EmbeddedClickHouse.defaultLibrary(),
				directory.resolve("clickhouse"), null, 0, EmbeddedClickHouse.defaultSessions(), credentials);
				Service secured = Service.start(128, "--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
						"--statehouse.clickhouse.password=" + credentials.password(),
						"--statehouse.clickhouse.database=bench_tokens",
						"--statehouse.security.tokens[0].name=bench", "--statehouse.security.tokens[0].sha256=" + hash,
						"--statehouse.security.tokens[0].scopes=read,write",
						"--statehouse.security.tokens[0].ids=other:*,bench:*");
				Service open = Service.start(128, "--statehouse.clickhouse.url=" + engine.jdbcUrl("default"),
						"--statehouse.clickhouse.password=" + credentials.password(),
						"--statehouse.clickhouse.database=bench_open")) {

			String[] bearer = { "Authorization", "Bearer " + SECRET };
			StateBenchmark.seed(secured.http, secured.baseUrl, seeded, bearer);
			StateBenchmark.seed(open.http, open.baseUrl, seeded);
			System.out.printf("Tokens vs open, one engine; %d rounds of %s, medians%n", rounds,
					Parameters.format(measure));
			paired("GET /states/{id}", 16, rounds, warmup, measure, get(secured, seeded, bearer), get(open, seeded));
			paired("PUT /states/{id}", 64, rounds, warmup, measure, put(secured, bearer), put(open));
		}
	}

	/**
	 * Both sides at once, half of the callers each, so that whatever the machine does meanwhile
	 * hits both alike: on a noisy machine, rounds run one after the other differ by more than
	 * what is measured here.
	 */
	private static void paired(String name, int threads, int rounds, Duration warmup, Duration measure,
			Load.Operation withToken, Load.Operation open) throws Exception {
		List<Double> ratios = new ArrayList<>();
		for (int round = 0; round < rounds; round++) {
			AtomicLong tokenOps = new AtomicLong();
			AtomicLong openOps = new AtomicLong();
			Load.Result both = Load.run(name + " (both)", threads, warmup, measure, (caller, n) -> {
				if (caller % 2 == 0) {
					withToken.run(caller, n);
					tokenOps.incrementAndGet();
				}
				else {
					open.run(caller, n);
					openOps.incrementAndGet();
				}
			});
			double ratio = (double) tokenOps.get() / openOps.get();
			ratios.add(ratio);
			System.out.printf("  %s; with a token %,d, open %,d: %.3fx%n", both, tokenOps.get(), openOps.get(), ratio);
		}
		System.out.printf("%s with a token vs open, %d + %d callers at once: %.3fx (median of %d rounds)%n", name,
				threads / 2, threads / 2, Load.median(ratios), rounds);
	}

	private static Load.Operation get(Service service, int seeded, String... headers) {
		return (caller, n) -> {
			HttpGet get = new HttpGet(service.baseUrl + "/states/bench:seed:"
					+ ((caller * 7919L + n * 104_729L) % seeded));
			if (headers.length > 0) {
				get.setHeader(headers[0], headers[1]);
			}
			StateBenchmark.expect(service.http, get, 200);
		};
	}

	private static Load.Operation put(Service service, String... headers) {
		AtomicLong puts = new AtomicLong();
		return (caller, n) -> {
			HttpPut put = new HttpPut(service.baseUrl + "/states/bench:put:" + puts.incrementAndGet());
			put.setEntity(new StringEntity(StateBenchmark.DOCUMENT, ContentType.APPLICATION_JSON));
			if (headers.length > 0) {
				put.setHeader(headers[0], headers[1]);
			}
			StateBenchmark.expect(service.http, put, 201);
		};
	}

}

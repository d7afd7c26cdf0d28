/*
 * Runs Kafka's own metadata shell on many files in one JVM, for the
 * differential test of metashell's /image view (tests/realkafka/test_image_vs_kafka_shell.py).
 *
 * Usage: ImageDump OUT_DIR TIMEOUT_MS FILE...
 * For the N-th FILE (from 0) it writes OUT_DIR/N.tree (what the shell's
 * one-shot `tree /image` prints), OUT_DIR/N.tries and OUT_DIR/N.status:
 * "ok", "hang" (the shell did not finish loading within TIMEOUT_MS plus
 * 2 ms per KiB of the file, as it does on a file without metadata records)
 * or "error <class>: <message>".
 *
 * The shell's one-shot mode answers from the empty image when its loader
 * has applied a batch but not yet published the image (most files of a few
 * batches or more), so the driver does what its interactive mode lets a user
 * do: it loads the file with a one-shot `pwd`, asks the same shell state for
 * `cat /image/provenance` until the image is published (offset not -1) and
 * then until it holds still for 0.3 s (the loader publishes as it goes),
 * then runs `tree /image` with Kafka's own Commands. A run that hangs (the
 * image never published: a file without metadata records, a log Kafka's
 * image refuses) is tried again with a new shell, up to TRIES times. Files
 * run WORKERS at a time (the shell prints to System.out, which sends each
 * thread's output to its own sink).
 */
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.shell.MetadataShell;
import org.apache.kafka.shell.command.Commands;
import org.apache.kafka.shell.state.MetadataShellState;

public final class ImageDump {
    private static final int TRIES = 10;
    private static final long STILL_NS = 300_000_000L;   // 0.3 s without a newer image
    private static final int WORKERS = 8;
    private static final ThreadLocal<OutputStream> SINK = new ThreadLocal<>();

    private ImageDump() {
    }

    public static void main(String[] args) throws Exception {
        Path outDir = Paths.get(args[0]);
        long timeoutMs = Long.parseLong(args[1]);
        Exit.setExitProcedure((code, message) -> {
            throw new IllegalStateException("exit " + code + ": " + message);
        });
        System.setOut(new PerThreadOut(System.out));
        ExecutorService files = Executors.newFixedThreadPool(WORKERS);
        List<Future<?>> done = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String file = args[i];
            int n = i - 2;
            done.add(files.submit(() -> {
                dumpOne(file, outDir, n, timeoutMs);
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        System.exit(0);
    }

    private static void dumpOne(String file, Path outDir, int n, long timeoutMs) throws Exception {
        Path out = outDir.resolve(n + ".tree");
        long limit = timeoutMs + Files.size(Paths.get(file)) / 512;
        String status = "hang";
        int tries = 0;
        while (tries < TRIES && (status.equals("hang") || showsEmpty(status, out))) {
            status = runOne(file, out, limit);
            tries++;
        }
        Files.write(outDir.resolve(n + ".tries"), Integer.toString(tries).getBytes(StandardCharsets.UTF_8));
        Files.write(outDir.resolve(n + ".status"), status.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean showsEmpty(String status, Path out) throws IOException {
        return status.equals("ok")
            && new String(Files.readAllBytes(out), StandardCharsets.UTF_8).contains("\n  offset -1, ");
    }

    private static String runOne(String file, Path out, long timeoutMs) throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "image-dump");
            t.setDaemon(true);
            return t;
        });
        MetadataShell shell = new MetadataShell.Builder().setSnapshotPath(file).build();
        try (OutputStream stream = new FileOutputStream(out.toFile())) {
            Future<?> done = pool.submit(() -> {
                SINK.set(OutputStream.nullOutputStream());
                try {
                    shell.run(List.of("pwd"));
                } finally {
                    System.out.flush();
                    SINK.remove();
                }
                MetadataShellState state = shellState(shell);
                String seen = command(state, "cat", "/image/provenance");
                while (seen.startsWith("offset -1,")) {
                    Thread.sleep(20);
                    seen = command(state, "cat", "/image/provenance");
                }
                // the loader publishes images as it goes through a log: wait until its
                // provenance has held still for STILL_NS (the whole file applied)
                long still = System.nanoTime();
                while (System.nanoTime() - still < STILL_NS) {
                    Thread.sleep(20);
                    String now = command(state, "cat", "/image/provenance");
                    if (!now.equals(seen)) {
                        seen = now;
                        still = System.nanoTime();
                    }
                }
                PrintWriter writer = new PrintWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8));
                new Commands(false).parseCommand(List.of("tree", "/image")).run(Optional.empty(), writer, state);
                writer.flush();
                return null;
            });
            try {
                done.get(timeoutMs, TimeUnit.MILLISECONDS);
                return "ok";
            } catch (TimeoutException e) {
                done.cancel(true);
                return "hang";
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                return "error " + cause.getClass().getName() + ": " + cause.getMessage();
            }
        } finally {
            pool.shutdownNow();
            shell.close();
        }
    }

    private static MetadataShellState shellState(MetadataShell shell) throws ReflectiveOperationException {
        Field field = MetadataShell.class.getDeclaredField("state");
        field.setAccessible(true);
        return (MetadataShellState) field.get(shell);
    }

    /** What Kafka's shell prints for one command on the image it shows now. */
    private static String command(MetadataShellState state, String... words) throws Exception {
        StringWriter text = new StringWriter();
        PrintWriter writer = new PrintWriter(text);
        new Commands(false).parseCommand(List.of(words)).run(Optional.empty(), writer, state);
        writer.flush();
        return text.toString();
    }

    /** System.out: each thread's bytes to its SINK (else to the real stdout); never closed. */
    private static final class PerThreadOut extends PrintStream {
        private final PrintStream real;

        PerThreadOut(PrintStream real) {
            super(real, true);
            this.real = real;
        }

        private OutputStream target() {
            OutputStream sink = SINK.get();
            return sink != null ? sink : real;
        }

        @Override
        public void write(int b) {
            try {
                target().write(b);
            } catch (IOException e) {
                setError();
            }
        }

        @Override
        public void write(byte[] buf, int off, int len) {
            try {
                target().write(buf, off, len);
            } catch (IOException e) {
                setError();
            }
        }

        @Override
        public void flush() {
            try {
                target().flush();
            } catch (IOException e) {
                setError();
            }
        }

        @Override
        public void close() {
            flush();
        }
    }
}

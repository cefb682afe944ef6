// lockbench adapter for Apache Curator's ZooKeeper locks (strategies/adapters/PROTOCOL.md).
//
//   java -jar curator-lock-adapter.jar mutex    InterProcessMutex (exclusive, re-entrant)
//   java -jar curator-lock-adapter.jar rwlock   InterProcessReadWriteLock (shared = read lock)
//
// Requests arrive as JSON lines on stdin, answers leave as JSON lines on stdout; everything else
// (this adapter's notes, Curator's and ZooKeeper's logging) goes to stderr.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

public final class CuratorLockAdapter {
    private static final String LIBRARY = "curator";
    private static final String VERSION_RESOURCE =
            "META-INF/maven/org.apache.curator/curator-recipes/pom.properties";

    // Curator keeps the path of the node a thread's grant created in a protected method keyed on
    // the calling thread; its name ends in the ZooKeeper sequence number, our fencing number.
    private static final Method LOCK_PATH = lockPathMethod();

    private static final ScheduledExecutorService DEADLINES =
            Executors.newSingleThreadScheduledExecutor(task -> {
                Thread t = new Thread(task, "deadlines");
                t.setDaemon(true);
                return t;
            });

    // Waits, off every client's thread, for the lock nodes an abandoned acquire left behind to go.
    private static final ScheduledExecutorService NODE_WATCH =
            Executors.newSingleThreadScheduledExecutor(task -> {
                Thread t = new Thread(task, "node-watch");
                t.setDaemon(true);
                return t;
            });

    private final boolean readWrite;
    private final PrintStream out;
    private final Map<String, ClientSession> sessions = new HashMap<>();
    private boolean initialized;
    private String connectString = "";
    private String namespace = "";
    private Map<String, Object> options = Map.of();

    private CuratorLockAdapter(boolean readWrite, PrintStream out) {
        this.readWrite = readWrite;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        // Only protocol lines may reach stdout: anything a library prints with System.out would
        // be read by lockbench as a garbage answer, so System.out becomes stderr.
        PrintStream protocolOut = new PrintStream(new FileOutputStream(FileDescriptor.out), false,
                StandardCharsets.UTF_8);
        System.setOut(System.err);
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("zookeeper.jmx.log4j.disable", "true");

        if (args.length != 1 || !(args[0].equals("mutex") || args[0].equals("rwlock"))) {
            System.err.println("usage: java -jar curator-lock-adapter.jar mutex|rwlock");
            System.exit(2);
        }
        CuratorLockAdapter adapter = new CuratorLockAdapter(args[0].equals("rwlock"), protocolOut);
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (!line.isBlank())
                adapter.handle(line);
        }
        protocolOut.flush();
        // halt, not exit: closing the ZooKeeper sessions would delete their lock nodes, which is a
        // release; the protocol says an adapter whose stdin closes releases nothing.
        Runtime.getRuntime().halt(0);
    }

    // ---- requests --------------------------------------------------------------------------

    private void handle(String line) {
        Object parsed;
        try {
            parsed = Json.parse(line);
        } catch (IllegalArgumentException e) {
            log("request is not JSON (" + e.getMessage() + "): " + line);
            return;
        }
        if (!(parsed instanceof Map)) {
            log("request is not a JSON object: " + line);
            return;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> request = (Map<String, Object>) parsed;
        Object id = request.get("id");
        String type = string(request, "type");
        if (!(id instanceof Long)) {
            log("request without an integer id: " + line);
            return;
        }
        switch (type) {
            case "init" -> init((Long) id, request);
            case "time" -> send(answer(id, "time_ok").put("unix_ms", System.currentTimeMillis()));
            case "acquire", "release", "renew" -> {
                ClientSession session = sessions.get(string(request, "client"));
                if (!initialized || session == null) {
                    sendError(id, "bad-request", "unknown client " + Json.quote(string(request, "client"))
                            + (initialized ? "" : " (no init yet)"));
                    return;
                }
                session.submit((Long) id, type, request);
            }
            default -> sendError(id, "unsupported", "unknown request type " + Json.quote(type));
        }
    }

    private void init(long id, Map<String, Object> request) {
        if (initialized) {
            sendError(id, "bad-request", "init was already received");
            return;
        }
        namespace = string(request, "namespace");
        options = object(request.get("options"));
        List<String> hosts = new ArrayList<>();
        for (Object server : list(object(request.get("servers")).get("zookeeper"))) {
            Map<String, Object> s = object(server);
            hosts.add(string(s, "host") + ":" + s.get("port"));
        }
        connectString = String.join(",", hosts);
        List<Object> clients = list(request.get("clients"));
        // The probe ("clients":[]) must be answered without connecting anywhere.
        if (!clients.isEmpty() && connectString.isEmpty()) {
            sendError(id, "bad-request", "Curator needs servers.zookeeper");
            return;
        }
        if (!clients.isEmpty() && namespace.isEmpty()) {
            sendError(id, "bad-request", "init needs a namespace");
            return;
        }
        for (Object client : clients)
            sessions.put(String.valueOf(client), new ClientSession(String.valueOf(client)));
        // The lease is the ZooKeeper session, whose timeout the server clamps to its limits: with
        // the run's lease (options.lease_ms) each client connects now and init answers the
        // timeout the server granted, which is how long a crashed holder's lock lives.
        long leaseMs = number(options, "lease_ms", 0);
        long appliedLeaseMs = 0;
        if (!clients.isEmpty() && leaseMs > 0) {
            try {
                for (ClientSession session : sessions.values())
                    appliedLeaseMs = Math.max(appliedLeaseMs, session.connectForLease(leaseMs));
            } catch (Exception e) {
                sendError(id, "unavailable", "no ZooKeeper session for the lease: " + e);
                return;
            }
        } else if (!clients.isEmpty()) {
            warmUp();
        }
        initialized = true;
        Json.Obj capabilities = new Json.Obj()
                .put("reentrant", true)
                .put("shared", readWrite)
                .put("fencing", LOCK_PATH != null)
                // The lease is the ZooKeeper session, which the client's heartbeats keep alive.
                .put("auto_renewal", true)
                .put("renew", false)
                .put("lost_signal", true)
                // Each client's lock calls run on a thread of its own (see ClientSession).
                .put("concurrent", true);
        Json.Obj ok = answer(id, "init_ok");
        if (appliedLeaseMs > 0)
            ok.put("lease_ms", appliedLeaseMs);
        send(ok.put("library", LIBRARY + (readWrite ? "-rwlock" : "-mutex"))
                        .put("version", curatorVersion())
                        .put("services", List.of("zookeeper"))
                        .put("capabilities", capabilities));
    }

    // ---- one client: its ZooKeeper session and its locks, on one thread ---------------------

    /** A grant as lockbench sees it: a re-entered lock keeps its first token. */
    private static final class Grant {
        final String token;
        final String key;
        final boolean shared;
        final InterProcessMutex lock;
        final Long fence;
        int count = 1;
        volatile boolean lost;

        Grant(String token, String key, boolean shared, InterProcessMutex lock, Long fence) {
            this.token = token;
            this.key = key;
            this.shared = shared;
            this.lock = lock;
            this.fence = fence;
        }
    }

    /** One answer per request: whichever of the call and its deadline comes first. */
    private final class Reply {
        final long id;
        private final AtomicBoolean answered = new AtomicBoolean();

        Reply(long id) {
            this.id = id;
        }

        boolean send(Json.Obj message) {
            if (!answered.compareAndSet(false, true))
                return false;
            CuratorLockAdapter.this.send(message);
            return true;
        }

        boolean error(String code, String text) {
            return send(answer(id, "error").put("code", code).put("text", text));
        }
    }

    /**
     * Curator's locks belong to the thread that acquired them (InterProcessMutex keys its state on
     * Thread.currentThread(), and release() from another thread throws
     * IllegalMonitorStateException). So every lock call of one client runs on that client's own
     * single-thread executor, in the order the requests arrived; different clients of a packed
     * process run concurrently. Only the connection-state listener (Curator's event thread)
     * touches a grant from elsewhere, and only its `lost` flag.
     */
    private final class ClientSession {
        final String client;
        final ExecutorService thread;
        CuratorFramework curator;  // created on the first acquire: the lease sets its session
        final Map<String, InterProcessMutex> mutexes = new HashMap<>();
        final Map<String, InterProcessReadWriteLock> readWriteLocks = new HashMap<>();
        final Map<String, Grant> heldByKeyAndMode = new HashMap<>();
        final Map<String, Grant> grantsByToken = new ConcurrentHashMap<>();
        final AtomicLong sessionsLost = new AtomicLong();
        // Every ZooKeeper session this client has had: the owners of the lock nodes it made.
        final Set<Long> sessionIds = ConcurrentHashMap.newKeySet();

        ClientSession(String client) {
            this.client = client;
            this.thread = Executors.newSingleThreadExecutor(task -> {
                Thread t = new Thread(task, "client-" + client);
                t.setDaemon(true);
                return t;
            });
        }

        void submit(long id, String type, Map<String, Object> request) {
            Reply reply = new Reply(id);
            // ZooKeeper fails a request in flight only when its read timeout (2/3 of the session
            // timeout, i.e. of the lease) passes, and Curator then retries: longer than lockbench
            // waits for an answer (wait_ms + command timeout + 1 s). The answer is `timeout`, in
            // doubt, at wait_ms + command timeout + 0.5 s; the call goes on on the client's thread.
            // Half a second before lockbench's limit, as the npm adapters answer: with 0.2 s, a
            // loaded machine delivered the answer to scripts/adapter-contract 1846 ms after the
            // request, 154 ms inside its 2 s.
            long commandMs = number(options, "command_timeout_ms", 1000);
            long deadlineMs = type.equals("acquire") ? number(request, "wait_ms", 0) + commandMs + 500
                                                     : commandMs + 500;
            DEADLINES.schedule(() -> {
                if (reply.error("timeout", "no answer from ZooKeeper within " + deadlineMs + " ms"))
                    log(client + ": " + type + " " + id + " answered `timeout`, still running");
            }, deadlineMs, TimeUnit.MILLISECONDS);
            thread.execute(() -> {
                try {
                    switch (type) {
                        case "acquire" -> acquire(reply, request);
                        case "release" -> release(reply, request);
                        default -> reply.error("unsupported",
                                "Curator has no renew call: the ZooKeeper session is the lease, "
                                        + "kept alive by the client's heartbeats");
                    }
                } catch (Throwable e) {
                    log(client + ": " + type + " " + id + " failed: " + e);
                    reply.error(errorCode(e), String.valueOf(e));
                }
            });
        }

        void acquire(Reply reply, Map<String, Object> request) throws Exception {
            String key = string(request, "key");
            boolean shared = "shared".equals(string(request, "mode"));
            if (key.isEmpty() || key.startsWith("/") || key.endsWith("/")) {
                reply.error("bad-request", "bad key " + Json.quote(key));
                return;
            }
            if (shared && !readWrite) {
                reply.error("unsupported", "InterProcessMutex has no shared mode (use rwlock)");
                return;
            }
            long leaseMs = number(request, "lease_ms", 0);
            long waitMs = number(request, "wait_ms", 0);
            if (!connect(leaseMs)) {
                reply.error("unavailable",
                        "no ZooKeeper connection within connect_timeout_ms (" + connectString + ")");
                return;
            }
            forgetLostGrants();
            String heldKey = key + (shared ? "\0shared" : "\0exclusive");
            Grant held = heldByKeyAndMode.get(heldKey);
            InterProcessMutex lock = held != null ? held.lock : lockFor(key, shared);
            long lostBefore = sessionsLost.get();
            // acquire(time) returns false only after deleting the node it created (Curator's
            // LockInternals), so `held` is definite; its exceptions leave the outcome in doubt.
            boolean acquired;
            try {
                acquired = lock.acquire(waitMs, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                if (held != null)
                    throw e;  // a re-entry never reaches the server
                log(client + ": acquire " + reply.id + " of " + key + " failed: " + e);
                reply.error(errorCode(e), String.valueOf(e));
                reportAbandonedOnceGone(reply.id, key);
                return;
            }
            if (!acquired) {
                boolean answered = reply.error("held", "lock " + key
                        + " is held by another client (waited " + waitMs + " ms)");
                // Answered `timeout` before: in doubt, and the node Curator deleted may have
                // reached the front of the queue between its last look and the delete.
                if (!answered && held == null)
                    reportAbandonedOnceGone(reply.id, key);
                return;
            }
            Grant grant = held;
            if (grant == null) {
                String path = lockPath(lock);
                // The lock node's path is unique on the server (Curator's protected names carry a
                // random UUID), so a crashed client's successor never reuses a token.
                String token = path != null ? path : client + "#" + UUID.randomUUID();
                grant = new Grant(token, key, shared, lock, sequenceNumber(path));
            }
            Json.Obj ok = answer(reply.id, "acquire_ok").put("token", grant.token);
            if (grant.fence != null)
                ok.put("fence", grant.fence);
            if (!reply.send(ok.put("reentry", held != null))) {
                // Answered `timeout` already: nobody will ever release this grant but us.
                log(client + ": acquire of " + key + " succeeded after its answer: releasing it");
                if (held != null) {
                    lock.release();  // a re-entry: the earlier grant still holds, nothing changed
                    return;
                }
                releaseLateGrant(lock, grant, reply.id);
                return;
            }
            if (held != null) {
                held.count++;
                return;
            }
            heldByKeyAndMode.put(heldKey, grant);
            // Visible to the listener only now: a `lost` must never precede the grant it names.
            grantsByToken.put(grant.token, grant);
            // A session lost while acquire() ran reached the listener before this grant existed.
            if (sessionsLost.get() != lostBefore)
                reportLost(grant, "ZooKeeper session lost while acquiring");
        }

        void release(Reply reply, Map<String, Object> request) throws Exception {
            Grant grant = grantsByToken.get(string(request, "token"));
            if (grant == null || !grant.key.equals(string(request, "key"))) {
                reply.error("not-held", "token does not hold lock " + string(request, "key"));
                return;
            }
            if (grant.lost) {
                // The node belonged to a session Curator declared lost: the server deletes it
                // with that session; a delete from here could remove it early or find it gone.
                forget(grant);
                discardLockObjects(grant.key);
                answerLostGrantRelease(reply, grant);
                return;
            }
            try {
                grant.lock.release();
            } catch (IllegalMonitorStateException e) {
                forget(grant);
                discardLockObjects(grant.key);
                reply.error("not-held", "Curator: " + e.getMessage());
                return;
            } catch (Exception e) {
                // Curator forgot the grant and keeps retrying the delete in the background
                // (guaranteed delete): whether the node is gone now is unknown.
                if (--grant.count == 0)
                    forget(grant);
                throw e;
            }
            if (grant.lost) {
                // The session was lost while release() ran (a holder cut off from ZooKeeper
                // releases, Curator retries the delete, posts LOST, and after reconnecting finds
                // the node gone with the expired session: it ignores NoNode and returns). Curator's
                // return says nothing about whether the delete ran while the lock was still ours;
                // release_ok would claim it was held until now. In doubt (PROTOCOL.md).
                forget(grant);
                discardLockObjects(grant.key);
                reply.error("lost-during-release",
                        "the ZooKeeper session was lost while Curator released " + grant.key
                                + ": whether the lock was still held when its node went is unknown");
                return;
            }
            Json.Obj ok = answer(reply.id, "release_ok");
            if (--grant.count > 0)
                ok.put("still_held", true);
            else
                forget(grant);
            reply.send(ok);
        }

        private void forget(Grant grant) {
            grantsByToken.remove(grant.token);
            String heldKey = grant.key + (grant.shared ? "\0shared" : "\0exclusive");
            if (heldByKeyAndMode.get(heldKey) == grant)
                heldByKeyAndMode.remove(heldKey);
        }

        /**
         * Curator posts LOST on its own clock (no connection for a session timeout) and opens a
         * new session, while the server keeps the old one, and its lock node, until the server
         * expires it. `not-held` is true only once the node is gone; while it stands the lock is
         * still held by that session, and when it goes is the server's choice: in doubt.
         */
        private void answerLostGrantRelease(Reply reply, Grant grant) {
            if (!grant.token.startsWith("/")) {
                reply.error("session-lost", "lock " + grant.key + " was lost with the ZooKeeper "
                        + "session, and its node's path is unknown: whether it is still held is unknown");
                return;
            }
            try {
                if (curator.checkExists().forPath(grant.token) == null) {
                    reply.error("not-held", "lock " + grant.key + " was lost with the ZooKeeper "
                            + "session, and the server has deleted its node");
                } else {
                    reply.error("session-lost", "Curator declared the session of lock " + grant.key
                            + " lost, and its node is still on the server until the server expires "
                            + "that session: in doubt");
                }
            } catch (Exception e) {
                reply.error("session-lost", "lock " + grant.key + " was lost with the ZooKeeper "
                        + "session, and whether its node is still there is unknown: " + e);
            }
        }

        // After a lost session Curator's lock object still believes this thread holds the lock:
        // acquiring through it would "re-enter" without touching ZooKeeper. Fresh objects instead.
        private void forgetLostGrants() {
            for (Grant grant : List.copyOf(heldByKeyAndMode.values())) {
                if (grant.lost) {
                    heldByKeyAndMode.values().remove(grant);
                    discardLockObjects(grant.key);
                }
            }
        }

        private void discardLockObjects(String key) {
            mutexes.remove(key);
            readWriteLocks.remove(key);
        }

        private InterProcessMutex lockFor(String key, boolean shared) {
            String path = "/" + key;
            if (!readWrite)
                return mutexes.computeIfAbsent(key, k -> new InterProcessMutex(curator, path));
            InterProcessReadWriteLock rw = readWriteLocks.computeIfAbsent(
                    key, k -> new InterProcessReadWriteLock(curator, path));
            return shared ? rw.readLock() : rw.writeLock();
        }

        /** Connects on the client's thread (Curator's objects live there); the granted timeout. */
        long connectForLease(long leaseMs) throws Exception {
            long connectMs = number(options, "connect_timeout_ms", 1000);
            return thread.submit(() -> {
                if (!connect(leaseMs))
                    throw new IllegalStateException("no ZooKeeper connection within "
                            + connectMs + " ms (" + connectString + ")");
                return (long) curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
            }).get(connectMs + 5000, TimeUnit.MILLISECONDS);
        }

        private boolean connect(long leaseMs) throws Exception {
            if (curator == null) {
                long configured = number(options, "session_timeout_ms", 0);
                int sessionTimeoutMs = (int) (configured > 0 ? configured
                        : leaseMs > 0 ? leaseMs : 10_000);
                int connectTimeoutMs = (int) number(options, "connect_timeout_ms", 1000);
                int commandTimeoutMs = (int) number(options, "command_timeout_ms", 1000);
                int retryDelayMs = (int) Math.max(1, number(options, "retry_delay_ms", 5));
                curator = CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .namespace(namespace)
                        .sessionTimeoutMs(sessionTimeoutMs)
                        .connectionTimeoutMs(Math.min(connectTimeoutMs, sessionTimeoutMs))
                        // Each ZooKeeper operation is retried for at most the command timeout,
                        // so an answer comes within the protocol's wait_ms + command timeout.
                        .retryPolicy(new RetryUntilElapsed(commandTimeoutMs, retryDelayMs))
                        // Container parents are deleted by the server once empty (every 60 s),
                        // which restarts the sequence numbers the fences are made of. Persistent
                        // parents keep them increasing; lockbench deletes /<namespace> after a run.
                        .dontUseContainerParents()
                        .build();
                curator.getConnectionStateListenable().addListener(
                        (framework, state) -> connectionStateChanged(state));
                curator.start();
                if (!curator.blockUntilConnected(connectTimeoutMs, TimeUnit.MILLISECONDS))
                    return false;
                noteSession();
                log(client + ": ZooKeeper session timeout asked " + sessionTimeoutMs
                        + " ms (lease_ms " + leaseMs + "), granted by the server "
                        + curator.getZookeeperClient().getZooKeeper().getSessionTimeout() + " ms");
                return true;
            }
            if (curator.getZookeeperClient().isConnected())
                return true;
            return curator.blockUntilConnected(
                    (int) number(options, "connect_timeout_ms", 1000), TimeUnit.MILLISECONDS);
        }

        /**
         * LOST is Curator's word that the session is gone (expired at the server, or no
         * connection for a whole session timeout): its ephemeral lock nodes are, or will be,
         * deleted, so every grant of this client is reported lost. SUSPENDED is not: it only says
         * the connection dropped, and if it comes back within the session timeout the session and
         * its nodes never went away (RECONNECTED); reporting it as `lost` would record a loss that
         * did not happen. Curator's advice to treat SUSPENDED as lost is advice to the lock's
         * user; the protocol's `lost` records what the library told it, and LOST is that signal.
         */
        private void connectionStateChanged(ConnectionState state) {
            log(client + ": Curator connection state " + state);
            if (state.isConnected())
                noteSession();
            if (state != ConnectionState.LOST)
                return;
            sessionsLost.incrementAndGet();
            for (Grant grant : grantsByToken.values())
                reportLost(grant, "ZooKeeper session lost (Curator ConnectionState LOST)");
        }

        /**
         * Curator gave up acquire `requestId` without granting it: a call that fails deletes the
         * node it made (LockInternals' deleteOurPath, retried in the background when the delete
         * itself fails), and nobody learns whether that node reached the front of the queue - and
         * held the lock for nobody - before it went. Once no node of this client's sessions is
         * left under the lock (but those of its grants), whatever the call held is gone:
         * lockbench hears `abandoned` (PROTOCOL.md), which ends that hold in its history. Runs on
         * the client's thread, before its next request can make a node of its own; nodes still
         * there are watched from another thread until they go.
         */
        private void reportAbandonedOnceGone(long requestId, String key) {
            List<String> left;
            try {
                left = nodesLeftBy(key);
            } catch (Exception e) {
                log(client + ": whether abandoned acquire " + requestId + " of " + key
                        + " left its node is unknown: " + e);
                return;
            }
            if (left.isEmpty()) {
                sendAbandoned(requestId, key);
                return;
            }
            log(client + ": abandoned acquire " + requestId + " of " + key + " left " + left
                    + ": waiting for it to go");
            CuratorFramework framework = curator;
            // The server deletes the nodes of a session it expires within that session's timeout
            // (at most 20 ticks, 40 s by default); past a minute nothing is reported, as before.
            long giveUpAt = System.currentTimeMillis() + 60_000;
            NODE_WATCH.schedule(new Runnable() {
                @Override
                public void run() {
                    left.removeIf(path -> {
                        try {
                            return framework.checkExists().forPath(path) == null;
                        } catch (Exception e) {
                            return false;
                        }
                    });
                    if (left.isEmpty()) {
                        sendAbandoned(requestId, key);
                    } else if (System.currentTimeMillis() < giveUpAt) {
                        NODE_WATCH.schedule(this, 50, TimeUnit.MILLISECONDS);
                    } else {
                        log(client + ": abandoned acquire " + requestId + " of " + key
                                + " still has " + left + ": not reported");
                    }
                }
            }, 50, TimeUnit.MILLISECONDS);
        }

        /** This client's lock nodes under `key` that none of its grants stands for. */
        private List<String> nodesLeftBy(String key) throws Exception {
            noteSession();
            String parent = "/" + key;
            List<String> left = new ArrayList<>();
            List<String> children;
            try {
                children = curator.getChildren().forPath(parent);
            } catch (KeeperException.NoNodeException e) {
                return left;
            }
            for (String child : children) {
                String path = parent + "/" + child;
                if (grantsByToken.containsKey(path))
                    continue;
                Stat stat = curator.checkExists().forPath(path);
                if (stat != null && sessionIds.contains(stat.getEphemeralOwner()))
                    left.add(path);
            }
            return left;
        }

        private void sendAbandoned(long requestId, String key) {
            send(new Json.Obj()
                            .put("type", "late_grant")
                            .put("client", client)
                            .put("key", key)
                            .put("id", requestId)
                            .put("phase", "abandoned"));
        }

        private void noteSession() {
            try {
                long id = curator.getZookeeperClient().getZooKeeper().getSessionId();
                if (id != 0)
                    sessionIds.add(id);
            } catch (Exception e) {
                log(client + ": no ZooKeeper session id: " + e);
            }
        }

        /**
         * lockbench hears of both ends (PROTOCOL.md, `late_grant`): without them its history has
         * only the in-doubt acquire to explain another client's `held`. `requestId` names the
         * acquire answered in doubt: the key alone cannot tell two of them apart.
         */
        private void releaseLateGrant(InterProcessMutex lock, Grant grant, long requestId) {
            send(lateGrant(grant, requestId).put("phase", "granted"));
            try {
                lock.release();
            } catch (Exception e) {
                log(client + ": releasing the late grant of " + grant.key + ": " + e);
                send(lateGrant(grant, requestId).put("phase", "released").put("ok", false)
                        .put("text", String.valueOf(e)));
                return;
            }
            send(lateGrant(grant, requestId).put("phase", "released").put("ok", true));
        }

        private Json.Obj lateGrant(Grant grant, long requestId) {
            return new Json.Obj()
                    .put("type", "late_grant")
                    .put("client", client)
                    .put("key", grant.key)
                    .put("id", requestId)
                    .put("token", grant.token);
        }

        private void reportLost(Grant grant, String text) {
            synchronized (grant) {
                if (grant.lost)
                    return;
                grant.lost = true;
            }
            send(new Json.Obj()
                            .put("type", "lost")
                            .put("client", client)
                            .put("key", grant.key)
                            .put("token", grant.token)
                            .put("text", text));
        }
    }

    // ---- helpers ---------------------------------------------------------------------------

    /**
     * Loading Curator's and ZooKeeper's classes takes a few hundred milliseconds, which the first
     * acquire would otherwise spend inside its answer deadline; the session itself waits for the
     * first acquire's lease.
     */
    private static void warmUp() {
        Thread t = new Thread(() -> {
            try {
                for (String name : new String[] {"org.apache.curator.framework.CuratorFrameworkFactory",
                             "org.apache.curator.framework.imps.CuratorFrameworkImpl",
                             "org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock",
                             "org.apache.curator.framework.recipes.locks.LockInternals",
                             "org.apache.zookeeper.ZooKeeper", "org.apache.zookeeper.ClientCnxn"})
                    Class.forName(name, true, CuratorLockAdapter.class.getClassLoader());
            } catch (Throwable e) {
                log("warm-up: " + e);
            }
        }, "warm-up");
        t.setDaemon(true);
        t.start();
    }

    /** The node this thread's grant created, as Curator knows it (on the client's thread). */
    private static String lockPath(InterProcessMutex lock) {
        if (LOCK_PATH == null)
            return null;
        try {
            return (String) LOCK_PATH.invoke(lock);
        } catch (ReflectiveOperationException | RuntimeException e) {
            log("no lock node path: " + e);
            return null;
        }
    }

    /**
     * The sequence number ZooKeeper appended to the lock node: strictly increasing among the
     * children of the lock's node, whichever mode created them, so it is the lock's fence.
     */
    private static Long sequenceNumber(String path) {
        if (path == null)
            return null;
        int digits = path.length();
        while (digits > 0 && Character.isDigit(path.charAt(digits - 1)))
            digits--;
        return digits == path.length() ? null : Long.parseLong(path.substring(digits));
    }

    private static Method lockPathMethod() {
        try {
            Method m = InterProcessMutex.class.getDeclaredMethod("getLockPath");
            m.setAccessible(true);
            return m;
        } catch (ReflectiveOperationException | RuntimeException e) {
            log("InterProcessMutex.getLockPath unreachable, grants carry no fence: " + e);
            return null;
        }
    }

    /** Definite codes come from the callers; whatever is thrown leaves the outcome in doubt. */
    private static String errorCode(Throwable e) {
        if (e instanceof KeeperException.ConnectionLossException
                || e instanceof KeeperException.OperationTimeoutException)
            return "timeout";
        if (e instanceof KeeperException.SessionExpiredException)
            return "session-expired";
        if (e instanceof KeeperException)
            return "zookeeper-" + ((KeeperException) e).code().name().toLowerCase();
        return "error";
    }

    private static String curatorVersion() {
        try (InputStream in = CuratorLockAdapter.class.getClassLoader()
                        .getResourceAsStream(VERSION_RESOURCE)) {
            Properties p = new Properties();
            if (in != null)
                p.load(in);
            return p.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    private static Json.Obj answer(Object id, String type) {
        return new Json.Obj().put("in_reply_to", id).put("type", type);
    }

    private void sendError(Object id, String code, String text) {
        send(answer(id, "error").put("code", code).put("text", text));
    }

    private void send(Json.Obj message) {
        String line = message.toString();
        synchronized (out) {
            out.print(line);
            out.print('\n');
            out.flush();
        }
    }

    private static void log(String text) {
        System.err.println("curator-lock-adapter: " + text);
    }

    private static String string(Map<String, Object> m, String name) {
        Object v = m.get(name);
        return v instanceof String ? (String) v : "";
    }

    private static long number(Map<String, Object> m, String name, long fallback) {
        Object v = m.get(name);
        return v instanceof Number ? ((Number) v).longValue() : fallback;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object v) {
        return v instanceof Map ? (Map<String, Object>) v : Map.of();
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object v) {
        return v instanceof List ? (List<Object>) v : List.of();
    }

    /** The JSON this protocol needs, without a library on the class path to start up. */
    static final class Json {
        static final class Obj {
            private final Map<String, Object> fields = new LinkedHashMap<>();

            Obj put(String name, Object value) {
                fields.put(name, value);
                return this;
            }

            @Override
            public String toString() {
                StringBuilder b = new StringBuilder();
                write(b, fields);
                return b.toString();
            }
        }

        static String quote(String s) {
            StringBuilder b = new StringBuilder();
            write(b, s);
            return b.toString();
        }

        private static void write(StringBuilder b, Object v) {
            if (v == null) {
                b.append("null");
            } else if (v instanceof String) {
                String s = (String) v;
                b.append('"');
                for (int i = 0; i < s.length(); i++) {
                    char c = s.charAt(i);
                    switch (c) {
                        case '"' -> b.append("\\\"");
                        case '\\' -> b.append("\\\\");
                        case '\n' -> b.append("\\n");
                        case '\r' -> b.append("\\r");
                        case '\t' -> b.append("\\t");
                        default -> {
                            if (c < 0x20)
                                b.append(String.format("\\u%04x", (int) c));
                            else
                                b.append(c);
                        }
                    }
                }
                b.append('"');
            } else if (v instanceof Obj) {
                write(b, ((Obj) v).fields);
            } else if (v instanceof Map) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first)
                        b.append(',');
                    first = false;
                    write(b, String.valueOf(e.getKey()));
                    b.append(':');
                    write(b, e.getValue());
                }
                b.append('}');
            } else if (v instanceof List) {
                b.append('[');
                boolean first = true;
                for (Object o : (List<?>) v) {
                    if (!first)
                        b.append(',');
                    first = false;
                    write(b, o);
                }
                b.append(']');
            } else {
                b.append(v);  // Number, Boolean
            }
        }

        static Object parse(String text) {
            Json parser = new Json(text);
            Object v = parser.value();
            parser.space();
            if (parser.at != text.length())
                throw parser.error("trailing characters");
            return v;
        }

        private final String s;
        private int at;

        private Json(String s) {
            this.s = s;
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at offset " + at);
        }

        private void space() {
            while (at < s.length() && " \t\r\n".indexOf(s.charAt(at)) >= 0)
                at++;
        }

        private boolean take(char c) {
            space();
            if (at < s.length() && s.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private Object value() {
            space();
            if (at >= s.length())
                throw error("unexpected end");
            char c = s.charAt(at);
            if (c == '{') {
                at++;
                Map<String, Object> m = new LinkedHashMap<>();
                if (take('}'))
                    return m;
                do {
                    space();
                    if (at >= s.length() || s.charAt(at) != '"')
                        throw error("expected a name");
                    String name = string();
                    if (!take(':'))
                        throw error("expected ':'");
                    m.put(name, value());
                } while (take(','));
                if (!take('}'))
                    throw error("expected '}'");
                return m;
            }
            if (c == '[') {
                at++;
                List<Object> l = new ArrayList<>();
                if (take(']'))
                    return l;
                do {
                    l.add(value());
                } while (take(','));
                if (!take(']'))
                    throw error("expected ']'");
                return l;
            }
            if (c == '"')
                return string();
            for (String word : new String[] {"true", "false", "null"}) {
                if (s.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < s.length() && "+-0123456789.eE".indexOf(s.charAt(at)) >= 0)
                at++;
            String number = s.substring(start, at);
            try {
                if (number.matches("-?\\d+"))
                    return Long.valueOf(number);
                return Double.valueOf(number);
            } catch (NumberFormatException e) {
                at = start;
                throw error("unexpected character");
            }
        }

        private String string() {
            at++;  // the opening quote
            StringBuilder b = new StringBuilder();
            while (true) {
                if (at >= s.length())
                    throw error("unterminated string");
                char c = s.charAt(at++);
                if (c == '"')
                    return b.toString();
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (at >= s.length())
                    throw error("unterminated escape");
                char e = s.charAt(at++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        if (at + 4 > s.length())
                            throw error("short \\u escape");
                        b.append((char) Integer.parseInt(s.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> b.append(e);  // '"', '\\', '/'
                }
            }
        }
    }
}

'use strict';
// A minimal Node.js cluster relay on the npm `ws` package, written the way a typical Node
// implementation does the job (it stands for today's TypeScript relay in the benchmarks; see
// bench/README.md). Same configuration as the Coreflow relay (docs/contract.md §19):
//   CLOUDLY_URL, SERVEZONE_CLUSTER_RELAY_AUTHORIZATION (env or $CREDENTIALS_DIRECTORY file),
//   COREFLOW_RELAY_BIND_HOSTNAME, COREFLOW_RELAY_BIND_PORT, --ca-file PATH (extra trust for Cloudly).
// Job: one upstream WebSocket to Cloudly (exchangeClusterRelayAuthorization -> registerCloudlyClientSession,
// then getClusterConfig and getClusterRelayCertificate once); a TLS WebSocket listener for nodes; every
// node frame is JSON.parse'd and re-stringified with a fresh correlation id per hop; pushes are routed
// by request.session.nodeId; 8000 ms bounds; sockets registered under an older Cloudly session are
// closed with 4000 when a new one is up (spaced min(75, 5000/N) ms). No per-frame logging.
const fs = require('fs');
const https = require('https');
const path = require('path');
const { WebSocket, WebSocketServer } = require('ws');

const NODE_METHODS = new Set([
  'registerPalletRuntimeSession', 'getRuntimeManagedVpnCredential', 'getRuntimeRegistryCredential',
  'reportRuntimeNetworkProtection', 'reportRuntimeAssignmentObservation', 'reportRuntimeAssignmentTerminalReceipt',
  'getRuntimeSecretRecipientState', 'beginRuntimeSecretRecipientEnrollment', 'completeRuntimeSecretRecipientEnrollment',
  'getRuntimeAssignmentSecretMaterial',
]);
const NODE_PUSHES = new Set([
  'applyRuntimeAssignment', 'applyRuntimeNetworkSigningAuthority', 'applyRuntimeNetworkProjection',
  'applyRuntimeNetworkDnsLeaseRenewal',
]);
const CALL_TIMEOUT_MS = 8000;
const PUSH_TIMEOUT_MS = 8000;
const REGISTRATION_BUDGET_MS = 9000;

function log(...args) { console.log(new Date().toISOString(), ...args); }

function arg(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function bearer() {
  if (process.env.SERVEZONE_CLUSTER_RELAY_AUTHORIZATION) return process.env.SERVEZONE_CLUSTER_RELAY_AUTHORIZATION;
  const dir = process.env.CREDENTIALS_DIRECTORY;
  if (dir) return fs.readFileSync(path.join(dir, 'SERVEZONE_CLUSTER_RELAY_AUTHORIZATION'), 'utf8');
  throw new Error('SERVEZONE_CLUSTER_RELAY_AUTHORIZATION is not set');
}

function refusal(name, reason) { return { text: `${name}: ${reason}`, data: { name } }; }

const cloudlyUrl = process.env.CLOUDLY_URL;
const bindHost = process.env.COREFLOW_RELAY_BIND_HOSTNAME;
const bindPort = Number(process.env.COREFLOW_RELAY_BIND_PORT);
const caFile = arg('--ca-file');
const ca = caFile ? fs.readFileSync(caFile) : undefined;
const authorization = bearer();

// --- Cloudly session ------------------------------------------------------------------------------
let upstream = null;
let dispatchable = false;
let carrier = 0;
let callSeq = 0;
let backoffMs = 500;
let listenerStarted = false;
const pendingCalls = new Map(); // id -> { resolve, timer }

function callCloudly(method, request, timeoutMs = CALL_TIMEOUT_MS) {
  return new Promise((resolve) => {
    if (!upstream || upstream.readyState !== WebSocket.OPEN) {
      resolve({ error: refusal('cloudly-session-unavailable', 'no Cloudly session') });
      return;
    }
    const id = `c${++callSeq}`;
    const timer = setTimeout(() => {
      pendingCalls.delete(id);
      resolve({ error: refusal('cloudly-forward-timeout', `${method} got no answer from Cloudly within ${timeoutMs} ms`) });
    }, timeoutMs);
    pendingCalls.set(id, { resolve, timer });
    upstream.send(JSON.stringify({ method, request, correlation: { id, phase: 'request' } }));
  });
}

function connectCloudly() {
  const ws = new WebSocket(cloudlyUrl, { ca, maxPayload: 16 * 1024 * 1024 });
  upstream = ws;
  ws.on('open', () => handshake(ws).catch((e) => { log('Cloudly handshake failed:', e.message); ws.terminate(); }));
  ws.on('message', (data) => onCloudlyMessage(ws, data));
  ws.on('error', (e) => log('Cloudly socket error:', e.message));
  ws.on('close', () => {
    if (upstream === ws) {
      dispatchable = false;
      for (const [id, p] of pendingCalls) {
        clearTimeout(p.timer);
        p.resolve({ error: refusal('cloudly-session-lost', 'the Cloudly session closed before it answered') });
        pendingCalls.delete(id);
      }
      const wait = backoffMs * (0.8 + Math.random() * 0.4);
      backoffMs = Math.min(30000, backoffMs * 2);
      log(`Cloudly session lost; reconnecting in ${Math.round(wait)} ms`);
      setTimeout(connectCloudly, wait);
    }
  });
}

async function handshake(ws) {
  const ex = await callCloudly('exchangeClusterRelayAuthorization', { authorization });
  if (ex.error || !ex.response) throw new Error(`exchange refused: ${ex.error && ex.error.text}`);
  const reg = await callCloudly('registerCloudlyClientSession', {
    identity: { token: ex.response.identity.token },
    offer: { sessionKind: 'cloudlyClient', release: '33.1.0' },
  });
  if (reg.error || !reg.response) throw new Error(`registerCloudlyClientSession refused: ${reg.error && reg.error.text}`);
  if (upstream !== ws) return;
  dispatchable = true;
  backoffMs = 500;
  carrier += 1;
  log(`Cloudly session registered; carrier ${carrier}`);
  if (!listenerStarted) {
    listenerStarted = true;
    await startListener();
  } else {
    askOlderNodesToReregister();
  }
}

function onCloudlyMessage(ws, data) {
  let msg;
  try { msg = JSON.parse(data); } catch { return; }
  if (!msg || !msg.correlation) return;
  if (msg.correlation.phase === 'response') {
    const p = pendingCalls.get(msg.correlation.id);
    if (!p) return;
    pendingCalls.delete(msg.correlation.id);
    clearTimeout(p.timer);
    p.resolve(msg);
    return;
  }
  const answer = (body) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ method: msg.method, request: msg.request, ...body, correlation: { id: msg.correlation.id, phase: 'response' } }));
  };
  if (NODE_PUSHES.has(msg.method) && listenerStarted) {
    pushToNode(msg, answer);
    return;
  }
  answer({ response: null, error: refusal('method-not-served', `cloudly serves no method ${msg.method}`) });
}

// --- node lane ------------------------------------------------------------------------------------
const nodes = new Map(); // nodeId -> ws
let pushSeq = 0;

function pushToNode(msg, answer) {
  const session = msg.request && msg.request.session;
  if (!session || typeof session.nodeId !== 'string') {
    answer({ response: null, error: refusal('request-invalid', 'field request.session is missing') });
    return;
  }
  const ws = nodes.get(session.nodeId);
  if (!ws || ws.readyState !== WebSocket.OPEN) {
    answer({ response: null, error: refusal('node-not-connected', `node ${session.nodeId} is not connected to this relay`) });
    return;
  }
  const id = `p${++pushSeq}`;
  const timer = setTimeout(() => {
    ws.pending.delete(id);
    answer({ response: null, error: refusal('node-push-timeout', `${msg.method} got no answer from node ${session.nodeId} within ${PUSH_TIMEOUT_MS} ms`) });
  }, PUSH_TIMEOUT_MS);
  ws.pending.set(id, { timer, answer, method: msg.method });
  ws.send(JSON.stringify({ method: msg.method, request: msg.request, correlation: { id, phase: 'request' } }));
}

function sameBinding(a, b) {
  return a && b && a.nodeId === b.nodeId && a.clusterId === b.clusterId && a.sessionId === b.sessionId
    && a.relayRegistrationGeneration === b.relayRegistrationGeneration;
}

async function onNodeMessage(ws, data, isBinary) {
  if (isBinary) { ws.close(1003); return; }
  let msg;
  try { msg = JSON.parse(data); } catch { ws.close(1002); return; }
  if (!msg || typeof msg.method !== 'string' || !msg.correlation) { ws.close(1002); return; }
  if (msg.correlation.phase === 'response') {
    const p = ws.pending.get(msg.correlation.id);
    if (!p) return;
    ws.pending.delete(msg.correlation.id);
    clearTimeout(p.timer);
    const body = { response: msg.response === undefined ? null : msg.response };
    if (msg.error) body.error = msg.error;
    if (msg.retry) body.retry = msg.retry;
    p.answer(body);
    return;
  }
  const reply = (body) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ method: msg.method, request: msg.request, ...body, correlation: { id: msg.correlation.id, phase: 'response' } }));
  };
  if (!NODE_METHODS.has(msg.method)) {
    reply({ response: null, error: refusal('method-not-served', `listener serves no method ${msg.method}`) });
    return;
  }
  const request = msg.request || {};
  const registration = msg.method === 'registerPalletRuntimeSession';
  if (!registration) {
    if (!ws.binding) { reply({ response: null, error: refusal('session-binding-refused', 'this socket registered no runtime session') }); return; }
    if (!sameBinding(request.session, ws.binding) || nodes.get(ws.binding.nodeId) !== ws) {
      reply({ response: null, error: refusal('session-binding-refused', 'the binding is not the one this socket registered') });
      return;
    }
  }
  if (!dispatchable) {
    reply({ response: null, error: refusal('cloudly-session-unavailable', 'no Cloudly session') });
    return;
  }
  const answer = await callCloudly(msg.method, request, registration ? REGISTRATION_BUDGET_MS : CALL_TIMEOUT_MS);
  if (registration && answer.response && answer.response.session) {
    ws.binding = answer.response.session;
    ws.carrier = carrier;
    nodes.set(ws.binding.nodeId, ws);
  }
  const body = { response: answer.response === undefined ? null : answer.response };
  if (answer.error) body.error = answer.error;
  if (answer.retry) body.retry = answer.retry;
  reply(body);
}

function askOlderNodesToReregister() {
  const older = [...nodes.values()].filter((ws) => ws.carrier < carrier);
  if (older.length === 0) return;
  const spacing = Math.min(75, 5000 / older.length);
  older.forEach((ws, i) => {
    const close = () => {
      if (dispatchable && ws.readyState === WebSocket.OPEN && ws.carrier < carrier) ws.close(4000, 'cloudly session changed; register again');
    };
    if (i === 0) close(); else setTimeout(close, i * spacing);
  });
}

async function startListener() {
  const config = await callCloudly('getClusterConfig', {});
  if (config.error || !config.response) throw new Error('getClusterConfig refused');
  const origin = new URL(config.response.cluster.relay.origin);
  const cert = await callCloudly('getClusterRelayCertificate', { domain: origin.hostname });
  if (cert.error || !cert.response) throw new Error('getClusterRelayCertificate refused');
  const server = https.createServer({ cert: cert.response.certificate.certificatePem, key: cert.response.certificate.privateKeyPem });
  const wss = new WebSocketServer({ server, maxPayload: 16 * 1024 * 1024 });
  wss.on('connection', (ws) => {
    ws.pending = new Map();
    ws.on('message', (data, isBinary) => { onNodeMessage(ws, data, isBinary).catch((e) => log('node frame failed:', e.message)); });
    ws.on('error', () => {});
    ws.on('close', () => {
      if (ws.binding && nodes.get(ws.binding.nodeId) === ws) nodes.delete(ws.binding.nodeId);
      for (const [id, p] of ws.pending) {
        clearTimeout(p.timer);
        p.answer({ response: null, error: refusal('node-connection-lost', `node closed its socket before answering ${p.method}`) });
        ws.pending.delete(id);
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(bindPort, bindHost, resolve);
  });
  log('the relay is open for Cloudly dispatch');
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
connectCloudly();

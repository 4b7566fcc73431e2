import * as authoring from '@openbot/engine';
import * as node from '@openbot/engine/node';

/** What only a node needs: the machinery that builds, runs and stores a node's engine. */
const NODE_INTERNALS = ['EngineNode', 'Runner', 'PreparedClient', 'GroupWriter', 'ADVANCE_QUEUE', 'BOSS_OWN_BOOKKEEPING_OFF', 'withTransaction', 'withConnection', 'ENGINE_ENTITIES', 'Schedules', 'EventPublisher', 'RunScope', 'retryStorage'];

describe("the engine's two entry points", () => {
  it('[ARCH-01] the authoring entry exports no node internals; the node entry has each of them', () => {
    for (const name of NODE_INTERNALS) {
      expect({ name, inAuthoring: name in authoring }).toEqual({ name, inAuthoring: false });
      expect({ name, inNode: name in node }).toEqual({ name, inNode: true });
    }
  });

  it('[ARCH-01] the authoring entry has what a feature writes a workflow with, and the Engine handle it is injected', () => {
    for (const name of ['defineWorkflow', 'codec', 'InvalidStoredJson', 'Engine', 'ManualClock', 'executionReads', 'callQueries', 'NotAwaitingDecision', 'IdentityInvalid']) {
      expect({ name, inAuthoring: name in authoring }).toEqual({ name, inAuthoring: true });
    }
    // A handle and an injection token only: every member is the node's (EngineNode implements it).
    expect(Object.getOwnPropertyNames(authoring.Engine.prototype)).toEqual(['constructor']);
  });
});
